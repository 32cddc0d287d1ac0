//! `mallcheck completions SHELL` and `mallcheck man`: shell completion scripts and manual
//! pages generated from the command-line definition, so they never drift from `--help`.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::error::UsageError;
use crate::exit;

/// Prints the completion script of `args.shell`.
pub fn completions(args: &CompletionsArgs) -> Result<i32, UsageError> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "mallcheck", &mut script);
    print(&script)
}

/// Prints the manual page, or writes every page into `args.dir`.
pub fn man(args: &ManArgs) -> Result<i32, UsageError> {
    let Some(dir) = &args.dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(Cli::command())
            .render(&mut page)
            .map_err(|e| UsageError::setting("man", format!("cannot render: {e}"), None))?;
        return print(&page);
    };
    let io = |source| UsageError::Io {
        path: dir.clone(),
        source,
    };
    crate::atomic::create_dir(dir).map_err(io)?;
    clap_mangen::generate_to(Cli::command(), dir).map_err(io)?;
    crate::say::stderr_line!("wrote the manual pages to {}", dir.display());
    Ok(exit::PASS)
}

/// Writes to standard output; a closed pipe (`| head`) is not an error.
fn print(bytes: &[u8]) -> Result<i32, UsageError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(UsageError::setting(
            "stdout",
            format!("cannot write: {e}"),
            None,
        )),
        _ => Ok(exit::PASS),
    }
}
