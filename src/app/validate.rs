//! `mallcheck validate`: checks captured JSON response bodies offline against one schema and
//! prints the findings the way `run` does (one status line per file, then the summary).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::app::run::load_schemas;
use crate::cli::ValidateArgs;
use crate::error::UsageError;
use crate::exit;
use crate::local_file::{self, Kind};
use crate::redact::Redactor;
use crate::report::Sink;
use crate::report::console::{Console, Verbosity};
use crate::report::style;
use crate::service::lazy_json::LazyJson;
use crate::spec::catalog::RESPONSE_JSON;
use crate::spec::schemas::SchemaSet;
use crate::verdict::event::{CaseId, CaseResult, Event, Finding, Outcome, RunSummary};
use bytes::Bytes;

/// Findings of one captured body: a `response.json` finding when it is not JSON, else what
/// its parse found (keys given twice, numbers beyond a double) and the schema's findings, an
/// integer written as a float quoted as written.
pub fn check_body(schemas: &SchemaSet, schema: &str, bytes: &[u8]) -> Vec<Finding> {
    match LazyJson::parse_whole(Bytes::copy_from_slice(bytes)) {
        // A body the typed fast path read conforms beyond doubt: nothing to report.
        Ok(json) if schemas.conforms(schema, json.digest()) => Vec::new(),
        Ok(json) => {
            let mut findings = json.findings();
            findings.extend(schemas.validate(schema, &json));
            json.spell(&mut findings);
            findings
        }
        Err(e) => vec![Finding::new(
            &RESPONSE_JSON,
            "",
            "a well-formed UTF-8 JSON body",
            format!("invalid JSON: {e}"),
        )],
    }
}

fn stdout_error(source: std::io::Error) -> UsageError {
    UsageError::Io {
        path: PathBuf::from("<stdout>"),
        source,
    }
}

/// Runs `mallcheck validate`.
pub fn validate(args: &ValidateArgs, redactor: &Redactor) -> Result<i32, UsageError> {
    let schemas = load_schemas(args.schemas.as_ref())?;
    if !schemas.has(&args.schema) {
        let help = format!("valid names: {}", schemas.names().join(", "));
        return Err(UsageError::setting(
            "--schema",
            format!("unknown schema {:?}", args.schema),
            Some(&help),
        ));
    }
    if args.files.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(UsageError::setting(
            "validate",
            "`-` (standard input) is given more than once: it holds one capture",
            None,
        ));
    }
    let mut bodies: Vec<(&Path, Vec<u8>)> = Vec::with_capacity(args.files.len());
    for path in &args.files {
        // `-` is standard input (`curl … | mallcheck validate --schema NAME -`): a pipe or a
        // redirected file, read within the same limit.
        let source = if path.as_os_str() == "-" {
            Path::new("/dev/stdin")
        } else {
            path.as_path()
        };
        let bytes = local_file::read(source, Kind::CapturedResponse)?;
        bodies.push((path, bytes));
    }
    let started = Instant::now();
    let color = style::use_color(args.color.into());
    let mut console = Console::new(std::io::stdout(), redactor, color, Verbosity::Normal, false);
    let mut summary = RunSummary::default();
    for (index, (path, bytes)) in bodies.iter().enumerate() {
        let one = Instant::now();
        let findings = check_body(&schemas, &args.schema, bytes);
        let outcome = Outcome::of(&findings, false);
        summary.add(outcome);
        let result = CaseResult {
            omitted: vec![],
            id: CaseId {
                file: path.to_path_buf(),
                name: format!("schema {}", args.schema),
                endpoint: "offline".into(),
                index,
                line: None,
            },
            outcome,
            findings,
            exchanges: vec![],
            skip_reason: None,
            flaky: false,
            duration: one.elapsed(),
            coverage: vec![],
        };
        console
            .on_event(&Event::CaseFinished(Box::new(result.seal(redactor))))
            .map_err(stdout_error)?;
    }
    summary.duration = started.elapsed();
    // Offline, a body that is not JSON is as broken as one that breaks the schema.
    let code = if summary.failed + summary.errored > 0 {
        exit::FAILURE
    } else {
        exit::PASS
    };
    console
        .on_event(&Event::RunFinished(summary))
        .map_err(stdout_error)?;
    console.finish().map_err(stdout_error)?;
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::catalog::MALL_STATE;

    #[test]
    fn invalid_json_is_a_response_json_finding() {
        let schemas = SchemaSet::embedded().expect("schemas");
        let found = check_body(&schemas, "mall-list-response", b"{\"success\":");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].check.id, RESPONSE_JSON.id);
    }

    #[test]
    fn schema_violations_are_reported_with_their_check() {
        let schemas = SchemaSet::embedded().expect("schemas");
        let found = check_body(&schemas, "mall", br#"{"state": 3}"#);
        assert!(
            found.iter().any(|f| f.check.id == MALL_STATE.id),
            "{found:?}"
        );
        let ok = check_body(
            &schemas,
            "mall-list-response",
            br#"{"success":true,"code":"0000","msg":"ok","data":[]}"#,
        );
        assert!(ok.is_empty(), "{ok:?}");
    }
}
