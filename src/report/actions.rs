//! GitHub Actions workflow commands: an annotation (`::error file=…,line=…::`) per failing
//! case, pointing at its case file and line, `::group::` around the lines of each case file,
//! and the Markdown summary appended to `$GITHUB_STEP_SUMMARY`. The console writes them (see
//! [`Console::with_github_actions`](crate::report::console::Console::with_github_actions)),
//! through its scrubbing writer like every other line.

use std::io::Write;
use std::path::Path;

use crate::diag::escape_controls;
use crate::report::{junit, text};
use crate::verdict::event::{CaseResult, Outcome};

/// Whether the process runs as a GitHub Actions step (`GITHUB_ACTIONS=true`).
pub fn enabled() -> bool {
    std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true")
}

/// `::group::TITLE`, which folds the log lines up to the next [`GROUP_END`].
pub fn group(title: &str) -> String {
    format!("::group::{}", data(title))
}

/// Ends a [`group`].
pub const GROUP_END: &str = "::endgroup::";

/// The annotation of a case: `::error` for a failure or an error, `::warning` for a case that
/// warned, none otherwise; at the case file and the line its first shown finding names (or
/// where the case starts), titled with the outcome and the case's name, saying the first
/// finding.
pub fn annotation(result: &CaseResult, strict: bool) -> Option<String> {
    let (command, shown) = match result.outcome {
        Outcome::Fail | Outcome::Error => ("error", text::blocking(result, strict)),
        Outcome::Warn => (
            "warning",
            result
                .findings
                .iter()
                .filter(|f| f.outcome(strict) == Outcome::Warn)
                .collect(),
        ),
        Outcome::Pass | Outcome::Skip => return None,
    };
    let mut properties = vec![format!(
        "file={}",
        property(&junit::file_attr(&result.id.file))
    )];
    if let Some(line) = text::case_line(result, &shown) {
        properties.push(format!("line={line}"));
    }
    properties.push(format!(
        "title={}",
        property(&format!("{} {}", result.outcome.label(), result.id.name))
    ));
    let message = match shown.first() {
        Some(first) if shown.len() > 1 => {
            format!("{} (+{} more)", first.headline(), shown.len() - 1)
        }
        Some(first) => first.headline(),
        None => result.outcome.label().to_string(),
    };
    Some(format!(
        "::{command} {}::{}",
        properties.join(","),
        data(&message)
    ))
}

/// A command's message: `%`, CR and LF escaped as the runner reads them, other control
/// characters made visible.
fn data(text: &str) -> String {
    escape_controls(
        &text
            .replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A"),
    )
    .into_owned()
}

/// A command's property value: as [`data`], with `:` and `,` escaped too.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Appends the Markdown summary at `markdown` (a report already written, and scrubbed, by
/// its sink) to the file `$GITHUB_STEP_SUMMARY` names, when it names one.
pub fn append_step_summary(markdown: &Path) -> Result<(), String> {
    let Some(target) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    let target = Path::new(&target);
    let why = |e: std::io::Error| {
        format!(
            "cannot append the Markdown summary to $GITHUB_STEP_SUMMARY ({}): {e}",
            target.display()
        )
    };
    let text = std::fs::read(markdown).map_err(why)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(target)
        .map_err(why)?;
    file.write_all(&text)
        .and_then(|()| file.write_all(b"\n"))
        .map_err(why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::catalog;
    use crate::verdict::event::{CaseId, Finding, SourceLocation};
    use std::path::PathBuf;
    use std::time::Duration;

    #[test]
    fn a_failing_case_is_an_error_at_its_finding_line_with_escaped_text() {
        let mut result = CaseResult::not_run(
            CaseId {
                file: PathBuf::from("cases/a,b.yaml"),
                name: "state: in range".into(),
                endpoint: "mall-list".into(),
                index: 0,
                line: Some(3),
            },
            "",
        );
        result.outcome = Outcome::Fail;
        result.skip_reason = None;
        result.duration = Duration::ZERO;
        result.findings = vec![
            Finding::new(&catalog::MALL_STATE, "/data/0/state", "0, 1 or 2", "3%\n").at(Some(
                SourceLocation {
                    file: PathBuf::from("cases/a,b.yaml"),
                    line: 12,
                    column: 7,
                },
            )),
        ];
        let line = annotation(&result, false).expect("an annotation");
        assert!(
            line.starts_with(
                "::error file=cases/a%2Cb.yaml,line=12,title=FAIL state%3A in range::mall.state"
            ),
            "{line}"
        );
        assert!(line.ends_with("got 3%25%0A"), "{line}");
        result.findings[0].location = None;
        assert!(annotation(&result, false).unwrap().contains(",line=3,"));
        result.outcome = Outcome::Pass;
        assert_eq!(annotation(&result, false), None);
    }
}
