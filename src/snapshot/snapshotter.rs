//! The run's snapshot behaviour: names snapshots after their case, scrubs secrets, applies
//! redactions and turns insta's verdict into `snapshot.match` findings.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use super::classify::{self, Contract};
use super::engine::{self, Assertion, UpdateMode, Verdict};
use super::{render, store};
use crate::case::model::SnapshotSpec;
use crate::redact::Redactor;
use crate::spec::catalog;
use crate::verdict::event::{CaseId, Finding};

/// Selectors redacted in every snapshot: envelope values that legitimately change on every call
/// (the spec shows none; these are the usual names of trace ids and server clocks). A selector
/// that matches nothing has no effect.
pub const DEFAULT_REDACTIONS: &[&str] = &[
    ".traceId",
    ".requestId",
    ".timestamp",
    ".serverTime",
    ".responseTime",
];

/// What `run` does with snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotMode {
    /// Compare with the accepted snapshots; new and changed ones are written as pending.
    Check,
    /// Record every snapshot, overwriting the accepted ones.
    Update,
}

/// Snapshot settings of a run.
#[derive(Debug, Clone)]
pub struct SnapshotOptions {
    /// Check or update.
    pub mode: SnapshotMode,
    /// Snapshot directory as the user gave it (shown in messages).
    pub dir: PathBuf,
    /// Absolute directory insta's paths are resolved against (the working directory).
    pub root: PathBuf,
    /// `--ci`: write nothing, and a missing snapshot fails.
    pub ci: bool,
    /// The `CI` variable is set (a pipeline) without `--ci`: snapshots behave as in `check`
    /// (a missing one is written as pending and does not fail); the closing note says so.
    pub ci_env: bool,
}

impl SnapshotOptions {
    /// What insta writes in this mode.
    pub fn update_mode(&self) -> UpdateMode {
        match (self.mode, self.ci) {
            (SnapshotMode::Update, _) => UpdateMode::Overwrite,
            (SnapshotMode::Check, true) => UpdateMode::Nothing,
            (SnapshotMode::Check, false) => UpdateMode::Pending,
        }
    }

    /// The snapshot directory as an absolute path.
    pub fn absolute_dir(&self) -> PathBuf {
        self.root.join(&self.dir)
    }
}

/// Whether the `CI` variable's value means "running in CI" (set and not `false`, `0` or empty,
/// as insta reads it). mallcheck only mentions it in its closing note: a pipeline that runs the
/// suite against a target with no recorded snapshot yet stays green unless `--ci` asks otherwise.
pub fn ci_from_env(value: Option<&str>) -> bool {
    value.is_some_and(|v| !matches!(v, "" | "0" | "false" | "FALSE" | "False"))
}

/// Variables a CI service sets in every job, beside `CI` (Jenkins and Azure Pipelines set no
/// `CI`; a job may clear it).
const CI_SERVICE_VARS: &[&str] = &[
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "JENKINS_URL",
    "TF_BUILD",
    "BUILDKITE",
    "CIRCLECI",
    "TRAVIS",
    "TEAMCITY_VERSION",
    "BITBUCKET_BUILD_NUMBER",
    "CODEBUILD_BUILD_ID",
    "DRONE",
    "APPVEYOR",
];

/// Whether the process runs in a CI job: `CI` set (not to a false value), or a variable a CI
/// service sets in every job.
pub fn in_ci(var: impl Fn(&str) -> Option<String>) -> bool {
    ci_from_env(var("CI").as_deref())
        || CI_SERVICE_VARS
            .iter()
            .any(|name| ci_from_env(var(name).as_deref()))
}

/// The snapshot name of a case: `<file stem>__<case name>`, each lower-cased with runs of other
/// characters than letters, digits, `-` and `_` turned into one `-`.
pub fn snapshot_name(case_file: &Path, case_name: &str) -> String {
    let stem = case_file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{}__{}", slug(&stem), slug(case_name))
}

fn slug(text: &str) -> String {
    let slugged = super::target::slug(text);
    if slugged.is_empty() {
        "unnamed".to_string()
    } else {
        slugged
    }
}

/// Replaces every secret `redactor` (the session's) knows in the strings of `value` (keys
/// included): for `diff`, which classifies the changes of the scrubbed value itself (a run's
/// snapshot scrubs as it shapes, see [`crate::json::selector::shape`]).
pub fn scrub_value(value: &Value, redactor: &Redactor) -> Value {
    match value {
        Value::String(s) => Value::String(redactor.scrub(s).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(|v| scrub_value(v, redactor)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (redactor.scrub(k).into_owned(), scrub_value(v, redactor)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Checks, before a run, that `dir` (the snapshot directory) is a directory or can
/// become one: neither it nor a directory above it is a file, and when the run may write
/// (`create`: not under `--ci`, which writes nothing) a missing one is created now, so that a
/// directory that cannot be made (`/proc/x`, a read-only mount) is a usage error before any
/// request rather than an error of every snapshot case after the suite. Every snapshot file
/// already in it must be a regular file within the size limit of [`store::check_files`]. The
/// error reads after "DIR: ".
pub fn check_dir(dir: &Path, create: bool) -> Result<(), String> {
    match dir.ancestors().find(|a| a.exists()) {
        Some(found) if !found.is_dir() => Err(if found == dir {
            "it is a file, not a directory".to_string()
        } else {
            format!("{} is a file, not a directory", found.display())
        }),
        Some(found) if found == dir => store::check_files(dir).map_err(|e| e.to_string()),
        _ if create => std::fs::create_dir_all(dir).map_err(|e| format!("cannot create it: {e}")),
        _ => Ok(()),
    }
}

/// Longest snapshot file name in bytes, with the `.snap.new` insta writes beside it: most
/// file systems take 255.
const MAX_FILE_NAME: usize = 255;

/// A case that takes a snapshot: its file, its name, and where it is written (`FILE:LINE`).
pub struct SnapshotCase<'a> {
    /// The case file.
    pub file: &'a Path,
    /// The case's name.
    pub name: &'a str,
    /// Where the case is written, for messages.
    pub place: String,
}

/// Problems of the snapshot files of `cases`, found before anything is sent: two cases whose
/// names make one file name (each would be compared with the other's response, and a change
/// hidden), and a name whose file name is too long for a file system. Each reads after
/// "snapshots: ".
pub fn name_problems(cases: &[SnapshotCase<'_>]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut first_of: std::collections::HashMap<String, &SnapshotCase<'_>> =
        std::collections::HashMap::new();
    for case in cases {
        let name = snapshot_name(case.file, case.name);
        let file_name = format!("{name}.snap.new");
        if file_name.len() > MAX_FILE_NAME {
            problems.push(format!(
                "the snapshot of case `{}` ({}) would be named {} bytes long, over the {} a \
                 file system takes: shorten its name",
                case.name,
                case.place,
                file_name.len(),
                MAX_FILE_NAME
            ));
            continue;
        }
        match first_of.get(&name) {
            Some(first) => problems.push(format!(
                "cases `{}` ({}) and `{}` ({}) would share the snapshot file {name}.snap \
                 (names are lower-cased and runs of other characters than letters, digits, \
                 `-` and `_` become one `-`): rename one",
                first.name, first.place, case.name, case.place
            )),
            None => {
                first_of.insert(name, case);
            }
        }
    }
    problems
}

/// What a run wrote, for the closing note.
#[derive(Debug, Default)]
struct Written {
    pending: Vec<PathBuf>,
    updated: Vec<PathBuf>,
}

/// Snapshot comparison of a run; clones share what was written.
#[derive(Debug, Clone)]
pub struct Snapshotter {
    options: SnapshotOptions,
    redactor: Redactor,
    written: Arc<Mutex<Written>>,
    contract: Contract,
}

impl Snapshotter {
    /// A snapshotter scrubbing with `redactor` (the session's); the process must have been
    /// configured with [`engine::prepare_process`]`(options.update_mode(), &options.root)`.
    pub fn new(options: SnapshotOptions, redactor: &Redactor) -> Self {
        Snapshotter {
            options,
            redactor: redactor.clone(),
            written: Arc::default(),
            contract: Contract::default(),
        }
    }

    /// Judges a difference by what the response schemas allow (closed sets, types), as
    /// `mallcheck diff` does: a change of shape fails (`snapshot.match`), a change of data
    /// only warns (`snapshot.data`), since a live service's data changes between two runs.
    pub fn with_contract(mut self, contract: Contract) -> Self {
        self.contract = contract;
        self
    }

    /// Keeps this run's snapshots in `<dir>/<target>/` (see [`super::target`]), so the snapshots
    /// of one service never take part in a run against another.
    pub fn for_target(mut self, target: &str) -> Self {
        self.options.dir = self.options.dir.join(target);
        self
    }

    /// The settings.
    pub fn options(&self) -> &SnapshotOptions {
        &self.options
    }

    /// Every redaction selector of a case: the defaults, then the case's own.
    pub fn redactions(spec: &SnapshotSpec) -> Vec<String> {
        DEFAULT_REDACTIONS
            .iter()
            .map(|s| s.to_string())
            .chain(spec.redact.iter().cloned())
            .collect()
    }

    /// Compares (or records) the snapshot of one case's response body (never headers).
    pub fn check(&self, case: &CaseId, spec: &SnapshotSpec, body: &Value) -> Vec<Finding> {
        let name = snapshot_name(&case.file, &case.name);
        let dir = self.options.absolute_dir();
        let shown = store::snap_path(&self.options.dir, &name);
        let redact = Snapshotter::redactions(spec);
        let description = format!(
            "{} response of case `{}` in {}",
            case.endpoint,
            case.name,
            case.file.display()
        );
        let mode = self.options.update_mode();
        // `--snapshots update` writes over whatever is there; otherwise a broken baseline is a
        // local problem, never a pass (insta would take it for none) nor the service's fault.
        if mode != UpdateMode::Overwrite
            && let Some(problem) = store::broken_baseline(&dir, &name)
        {
            return vec![Finding::new(
                &catalog::HARNESS_SNAPSHOT,
                "",
                format!("{} a snapshot mallcheck can compare", shown.display()),
                format!(
                    "{problem}: mend it, delete it, or record it again with --snapshots update"
                ),
            )];
        }
        let input_file = self.options.root.join(&case.file);
        let assertion = Assertion {
            dir: &dir,
            name: &name,
            value: body,
            scrub: &|text| self.redactor.scrub(text),
            redact: &redact,
            sort: &spec.sort,
            description: &description,
            input_file: input_file.is_file().then_some(input_file.as_path()),
        };
        let verdict = engine::assert_json(&assertion);
        match verdict {
            Verdict::Match => {
                if mode == UpdateMode::Overwrite {
                    let _ = std::fs::remove_file(dir.join(format!("{name}{}", store::PENDING_SUFFIX)));
                }
                vec![]
            }
            Verdict::New => match mode {
                UpdateMode::Nothing => vec![Finding::new(
                    &catalog::SNAPSHOT_MATCH,
                    "",
                    format!("a recorded snapshot {}", shown.display()),
                    "no snapshot recorded (CI mode writes none)",
                )
                .with_detail("record it locally with `mallcheck run --snapshots update` (or accept the pending one) and commit it")],
                UpdateMode::Pending => {
                    self.note_pending(&shown);
                    vec![]
                }
                UpdateMode::Overwrite => {
                    self.note_updated(&shown);
                    vec![]
                }
            },
            Verdict::Mismatch { reference, test } => match mode {
                UpdateMode::Overwrite => {
                    let _ = std::fs::remove_file(dir.join(format!("{name}{}", store::PENDING_SUFFIX)));
                    self.note_updated(&shown);
                    vec![]
                }
                UpdateMode::Pending | UpdateMode::Nothing => {
                    if mode == UpdateMode::Pending {
                        self.note_pending(&shown);
                    }
                    vec![self.mismatch(&shown, &reference, &test, mode)]
                }
            },
            // A local problem (a file in place of the directory, a full disk): an error of the
            // run, never a contract finding against the service.
            Verdict::Failed(message) => vec![Finding::new(
                &catalog::HARNESS_SNAPSHOT,
                "",
                format!("{} readable and writable", shown.display()),
                format!("it could not be read or written: {message}"),
            )],
        }
    }

    fn mismatch(&self, shown: &Path, reference: &str, test: &str, mode: UpdateMode) -> Finding {
        let changes = render::field_changes(reference, test).unwrap_or_default();
        let pointer = changes
            .first()
            .map(|c| c.pointer.split('#').next().unwrap_or_default().to_string())
            .unwrap_or_default();
        let actual = match changes.first() {
            Some(first) => format!(
                "{} changed field(s), first {}: {}",
                changes.len(),
                if first.pointer.is_empty() {
                    "(root)"
                } else {
                    &first.pointer
                },
                first.describe()
            ),
            None => "different text".to_string(),
        };
        let mut detail = render::explain(reference, test, &shown.display().to_string(), "response");
        if mode == UpdateMode::Pending {
            detail.push_str(&format!(
                "\npending: {}{} (review: `mallcheck snapshots review`, accept: `mallcheck snapshots accept`)",
                shown.display(),
                ".new"
            ));
        }
        // Only a difference that a client of the interface could trip on fails the case; a
        // difference of values, records or order in the same shape is the service's data.
        let data_only = match (
            serde_json::from_str::<Value>(reference),
            serde_json::from_str::<Value>(test),
        ) {
            (Ok(old), Ok(new)) => {
                let judged = classify::compare(&old, &new, &self.contract);
                !judged.is_empty() && !classify::is_breaking(&judged)
            }
            _ => false,
        };
        let (check, expected) = if data_only {
            (
                &catalog::SNAPSHOT_DATA,
                format!(
                    "the data of the recorded snapshot {} (the shape is unchanged: a warning unless --strict)",
                    shown.display()
                ),
            )
        } else {
            (
                &catalog::SNAPSHOT_MATCH,
                format!("the recorded snapshot {}", shown.display()),
            )
        };
        Finding::new(check, pointer, expected, actual).with_detail(detail.replace('\n', "\n  "))
    }

    fn note_pending(&self, shown: &Path) {
        let mut w = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        w.pending
            .push(PathBuf::from(format!("{}.new", shown.display())));
    }

    fn note_updated(&self, shown: &Path) {
        let mut w = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        w.updated.push(shown.to_path_buf());
    }

    /// A closing note on what the run wrote, if it wrote anything.
    pub fn summary(&self) -> Option<String> {
        let w = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        let mut lines = Vec::new();
        if !w.updated.is_empty() {
            lines.push(format!(
                "snapshots: {} written in {}",
                w.updated.len(),
                self.options.dir.display()
            ));
        }
        if !w.pending.is_empty() {
            let mut names: Vec<String> =
                w.pending.iter().map(|p| p.display().to_string()).collect();
            names.sort();
            lines.push(format!(
                "snapshots: {} pending ({}); review with `mallcheck snapshots review`, then `mallcheck snapshots accept` or `reject`",
                w.pending.len(),
                names.join(", ")
            ));
            if self.options.ci_env {
                lines.push(
                    "snapshots: CI is set; a snapshot not recorded yet does not fail the run (pass --ci to require recorded snapshots)"
                        .to_string(),
                );
            }
        }
        (!lines.is_empty()).then(|| lines.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn options(mode: SnapshotMode, ci: bool) -> SnapshotOptions {
        SnapshotOptions {
            mode,
            dir: "snapshots".into(),
            root: "/tmp".into(),
            ci,
            ci_env: false,
        }
    }

    #[test]
    fn names_combine_file_stem_and_slugged_case_name() {
        assert_eq!(
            snapshot_name(
                Path::new("cases/mall-list.yaml"),
                "First page: is a success envelope!"
            ),
            "mall-list__first-page-is-a-success-envelope"
        );
        assert_eq!(
            snapshot_name(Path::new("x.yaml"), "商城 列表"),
            "x__商城-列表"
        );
        assert_eq!(snapshot_name(Path::new("x.yaml"), "///"), "x__unnamed");
    }

    #[test]
    fn cases_whose_names_make_one_snapshot_file_or_too_long_a_name_are_problems() {
        let case = |file: &'static str, name: &'static str, line: usize| SnapshotCase {
            file: Path::new(file),
            name,
            place: format!("{file}:{line}"),
        };
        let long = "é".repeat(199);
        let cases = [
            case("c/odd.yaml", "A B", 1),
            case("c/odd.yaml", "a b", 5),
            case("c/odd.yaml", "a-b", 9),
            case("d/odd.yaml", "A b", 3),
            case("c/odd.yaml", "other", 12),
            SnapshotCase {
                file: Path::new("c/odd.yaml"),
                name: &long,
                place: "c/odd.yaml:20".to_string(),
            },
        ];
        let problems = name_problems(&cases);
        assert_eq!(problems.len(), 4, "{problems:#?}");
        assert!(
            problems[0].contains("`A B` (c/odd.yaml:1) and `a b` (c/odd.yaml:5)")
                && problems[0].contains("odd__a-b.snap"),
            "{}",
            problems[0]
        );
        assert!(problems[2].contains("(d/odd.yaml:3)"), "{}", problems[2]);
        assert!(problems[3].contains("c/odd.yaml:20") && problems[3].contains("bytes"));
        assert!(name_problems(&cases[4..5]).is_empty());
    }

    #[test]
    fn ci_variable_follows_insta() {
        assert!(ci_from_env(Some("true")));
        assert!(ci_from_env(Some("1")));
        assert!(!ci_from_env(Some("false")));
        assert!(!ci_from_env(Some("0")));
        assert!(!ci_from_env(Some("")));
        assert!(!ci_from_env(None));
    }

    #[test]
    fn modes_choose_what_insta_writes() {
        assert_eq!(
            options(SnapshotMode::Check, false).update_mode(),
            UpdateMode::Pending
        );
        assert_eq!(
            options(SnapshotMode::Check, true).update_mode(),
            UpdateMode::Nothing
        );
        assert_eq!(
            options(SnapshotMode::Update, true).update_mode(),
            UpdateMode::Overwrite
        );
    }

    #[test]
    fn secrets_are_scrubbed_from_values_and_keys() {
        let redactor = Redactor::new();
        redactor.add_secret("s3cret-key");
        let v = json!({"echo": "sig s3cret-key", "s3cret-key": [1, "s3cret-key"]});
        let scrub = |text: &str| -> String { redactor.scrub(text).into_owned() };
        let out = crate::json::selector::shape(&v, &|t| redactor.scrub(t), &[], &[], "x");
        let text = serde_json::to_string(&out).expect("serializes");
        assert!(!text.contains("s3cret-key"), "{text}");
        assert!(text.contains(r#""echo":"sig <redacted>""#), "{text}");
        assert_eq!(scrub("s3cret-key"), "<redacted>");
    }

    #[test]
    fn default_redactions_come_before_the_case_ones() {
        let spec = SnapshotSpec {
            redact: vec![".data[].ctime".into()],
            sort: vec![],
            walk: false,
            malls: None,
        };
        let r = Snapshotter::redactions(&spec);
        assert_eq!(r.last().map(String::as_str), Some(".data[].ctime"));
        assert_eq!(r.len(), DEFAULT_REDACTIONS.len() + 1);
    }

    #[test]
    fn check_dir_names_a_file_in_the_way() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notadir");
        std::fs::write(&file, "x").unwrap();
        assert_eq!(
            check_dir(&file, true).unwrap_err(),
            "it is a file, not a directory"
        );
        assert_eq!(
            check_dir(&file.join("embedded"), true).unwrap_err(),
            format!("{} is a file, not a directory", file.display())
        );
        assert_eq!(check_dir(&dir.path().join("new/embedded"), false), Ok(()));
        assert!(
            !dir.path().join("new").exists(),
            "nothing is created under --ci"
        );
        assert_eq!(check_dir(&dir.path().join("new/embedded"), true), Ok(()));
        assert!(dir.path().join("new/embedded").is_dir());
    }

    #[test]
    fn summary_lists_pending_files_only_when_something_was_written() {
        let s = Snapshotter::new(options(SnapshotMode::Check, false), &Redactor::new());
        assert_eq!(s.summary(), None);
        s.note_pending(Path::new("snapshots/a.snap"));
        let text = s.summary().unwrap();
        assert!(text.contains("1 pending (snapshots/a.snap.new)"), "{text}");
    }
}
