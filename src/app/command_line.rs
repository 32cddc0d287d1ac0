//! Reading the command line: clap's parse, then the defaults that depend on another flag.

use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

use crate::cli::{Cli, Command, OutputArgs};

/// The command line of this process, parsed. Under `run --shard K/N`, a report path left at
/// its default carries the shard (`reports/junit-K.xml`, `report-K.json`, `report-K.html`,
/// `summary-K.md`): shards run in one workspace write reports of their own (they shared
/// `report.html` and `summary.md`, and the second stopped at exit 2 on the first's lock).
pub fn parse() -> Result<Cli, clap::Error> {
    parse_from(std::env::args_os())
}

/// [`parse`] of `args` (the program's name first).
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = Cli::command().try_get_matches_from(args)?;
    let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut Cli::command()))?;
    if let Command::Run(args) = &mut cli.command
        && let Some(("run", run)) = matches.subcommand()
        && let Some(k) = args.shard.as_deref().and_then(shard_index)
    {
        shard_defaults(&mut args.output, k, run);
    }
    Ok(cli)
}

/// K of a `K/N` that reads as one; anything else is left to `run`, which refuses it.
fn shard_index(text: &str) -> Option<u64> {
    let (k, n) = text.split_once('/')?;
    let (k, n): (u64, u64) = (k.trim().parse().ok()?, n.trim().parse().ok()?);
    (1..=n).contains(&k).then_some(k)
}

fn shard_defaults(output: &mut OutputArgs, k: u64, matches: &ArgMatches) {
    for (id, path) in [
        ("junit", &mut output.junit),
        ("json", &mut output.json),
        ("html", &mut output.html),
        ("markdown", &mut output.markdown),
    ] {
        if matches.value_source(id) == Some(ValueSource::DefaultValue) {
            *path = with_shard(path, k);
        }
    }
}

/// `reports/junit.xml` as `reports/junit-K.xml`.
fn with_shard(path: &Path, k: u64) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{k}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{k}"),
    };
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(args: &[&str]) -> OutputArgs {
        let mut line = vec!["mallcheck", "run"];
        line.extend_from_slice(args);
        match parse_from(line).unwrap().command {
            Command::Run(args) => args.output,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_shard_puts_its_index_in_the_report_paths_left_at_their_defaults() {
        let out = output(&["--shard", "2/3", "--junit", "mine.xml"]);
        assert_eq!(out.junit, Path::new("mine.xml"));
        assert_eq!(out.json, Path::new("reports/report-2.json"));
        assert_eq!(out.html, Path::new("reports/report-2.html"));
        assert_eq!(out.markdown, Path::new("reports/summary-2.md"));
    }

    #[test]
    fn without_a_shard_or_with_a_bad_one_the_defaults_stay() {
        for args in [&[][..], &["--shard", "4/3"], &["--shard", "x"]] {
            let out = output(args);
            assert_eq!(out.junit, Path::new("reports/junit.xml"), "{args:?}");
            assert_eq!(out.html, Path::new("reports/report.html"), "{args:?}");
        }
    }
}
