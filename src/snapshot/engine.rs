//! The insta recipe for snapshots inside a shipped binary (notes/crates.md §2): process-wide
//! configuration set before any thread exists, an absolute snapshot path, a recording
//! [`Comparator`] for the verdict, and `catch_unwind` with a quiet panic hook around each call.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::{Arc, Mutex, Once, PoisonError};

use insta::{Comparator, DefaultComparator, Settings, Snapshot};
use serde_json::Value;

use crate::json::selector::Scrub;

/// What insta writes in this process when a snapshot is new or differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateMode {
    /// A pending `<name>.snap.new` next to the accepted snapshot (`INSTA_UPDATE=new`).
    Pending,
    /// The accepted `<name>.snap` itself (`INSTA_UPDATE=always`).
    Overwrite,
    /// Nothing (`INSTA_UPDATE=no`), as in CI and for the release diff.
    Nothing,
}

impl UpdateMode {
    fn insta_value(self) -> &'static str {
        match self {
            UpdateMode::Pending => "new",
            UpdateMode::Overwrite => "always",
            UpdateMode::Nothing => "no",
        }
    }
}

/// What replaces a value a selector redacts (a volatile value, not a secret: secrets are
/// scrubbed to `redact::REDACTED` before a value reaches insta). Recorded snapshots hold this
/// text, so it stays as it is.
pub const PLACEHOLDER: &str = "[redacted]";

/// Variables insta reads that would redirect or force what it writes; removed from the process.
const CLEARED_VARS: [&str; 5] = [
    "INSTA_FORCE_UPDATE",
    "INSTA_FORCE_UPDATE_SNAPSHOTS",
    "INSTA_PENDING_DIR",
    "INSTA_SNAPSHOT_REFERENCES_FILE",
    "INSTA_WARNINGS_FILE",
];

/// Configures insta for the whole process: workspace root, update mode, never panic on a
/// mismatch, print nothing (mallcheck renders its own diffs). insta reads these once, at the
/// first assertion, so a later call has no effect.
///
/// # Safety
///
/// It sets environment variables: call it before any other thread exists (before the tokio
/// runtime starts), as `std::env::set_var` requires.
pub unsafe fn prepare_process(mode: UpdateMode, workspace_root: &Path) {
    // SAFETY: the caller guarantees that no other thread exists yet.
    unsafe {
        std::env::set_var("INSTA_WORKSPACE_ROOT", workspace_root);
        std::env::set_var("INSTA_UPDATE", mode.insta_value());
        std::env::set_var("INSTA_FORCE_PASS", "1");
        std::env::set_var("INSTA_OUTPUT", "none");
        std::env::set_var("INSTA_REQUIRE_FULL_MATCH", "0");
        for name in CLEARED_VARS {
            std::env::remove_var(name);
        }
    }
    install_quiet_hook();
}

thread_local! {
    /// Set while this thread runs an insta assertion, whose panics are caught and reported.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

static HOOK: Once = Once::new();

/// One insta assertion at a time: its panic hook is global and its settings are per thread.
static INSTA: Mutex<()> = Mutex::new(());

/// Wraps the panic hook so that panics inside an assertion (caught and turned into a verdict)
/// print nothing, while every other panic still reaches the previous hook.
fn install_quiet_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// The recorded and the new contents, as insta serialized them (redactions applied).
#[derive(Debug, Clone)]
struct Compared {
    matched: bool,
    reference: String,
    test: String,
}

/// A comparator that remembers insta's verdict; `None` afterwards means there was no recorded
/// snapshot to compare with.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Option<Compared>>>);

impl Comparator for Recorder {
    fn matches(&self, reference: &Snapshot, test: &Snapshot) -> bool {
        let matched = DefaultComparator.matches(reference, test);
        let text = |s: &Snapshot| {
            s.contents()
                .as_text()
                .map(ToString::to_string)
                .unwrap_or_default()
        };
        let compared = Compared {
            matched,
            reference: text(reference),
            test: text(test),
        };
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(compared);
        matched
    }

    fn dyn_clone(&self) -> Box<dyn Comparator> {
        Box::new(self.clone())
    }
}

/// One snapshot assertion.
#[derive(Clone, Copy)]
pub struct Assertion<'a> {
    /// Snapshot directory; must be absolute (insta joins a relative one to its own source dir).
    pub dir: &'a Path,
    /// Snapshot name: the file is `<dir>/<name>.snap`.
    pub name: &'a str,
    /// The value to snapshot.
    pub value: &'a Value,
    /// How its strings and keys are scrubbed of secrets (the session's redactor).
    pub scrub: Scrub<'a>,
    /// insta selectors replaced by [`PLACEHOLDER`].
    pub redact: &'a [String],
    /// insta selectors whose sequences are sorted.
    pub sort: &'a [String],
    /// Free text stored in the snapshot header and shown in review.
    pub description: &'a str,
    /// The case file, recorded in the header when it is under the workspace root.
    pub input_file: Option<&'a Path>,
}

/// What an assertion found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The value equals the recorded snapshot.
    Match,
    /// The value differs; both texts as insta serialized them.
    Mismatch {
        /// The recorded snapshot's contents.
        reference: String,
        /// The new contents.
        test: String,
    },
    /// No snapshot was recorded (or it could not be read).
    New,
    /// insta failed (I/O error, bad selector); the message says why.
    Failed(String),
}

/// Runs one `assert_json_snapshot!` with the process configuration of [`prepare_process`].
pub fn assert_json(a: &Assertion<'_>) -> Verdict {
    if !a.dir.is_absolute() {
        return Verdict::Failed(format!(
            "snapshot directory {} is not absolute",
            a.dir.display()
        ));
    }
    // insta reads the files whole and would block on a FIFO: look at them first.
    for file in [
        super::store::snap_path(a.dir, a.name),
        a.dir
            .join(format!("{}{}", a.name, super::store::PENDING_SUFFIX)),
    ] {
        if let Err(e) = super::store::check_file(&file) {
            return Verdict::Failed(e.to_string());
        }
    }
    let _one_at_a_time = INSTA.lock().unwrap_or_else(PoisonError::into_inner);
    install_quiet_hook();
    let recorder = Recorder::default();
    QUIET.with(|q| q.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut settings = Settings::clone_current();
        settings.set_snapshot_path(a.dir);
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.set_description(a.description);
        if let Some(file) = a.input_file {
            settings.set_input_file(file);
        }
        settings.set_comparator(Box::new(recorder.clone()));
        // Maps sorted, then the redactions and sorts, as insta's own redactions would do them.
        let shaped = crate::json::selector::shape(a.value, a.scrub, a.redact, a.sort, PLACEHOLDER);
        settings.bind(|| assert_json_snapshot(a.name, &shaped))
    }));
    QUIET.with(|q| q.set(false));
    let compared = recorder
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    match (result, compared) {
        (Ok(Ok(())), Some(c)) if c.matched => Verdict::Match,
        (_, Some(c)) if !c.matched => Verdict::Mismatch {
            reference: c.reference,
            test: c.test,
        },
        (Ok(Ok(())), _) => Verdict::New,
        (Ok(Err(e)), _) => Verdict::Failed(e.to_string()),
        (Err(panic), None) => {
            let message = panic_text(&*panic);
            if message.starts_with("snapshot assertion for") {
                Verdict::New
            } else {
                Verdict::Failed(message)
            }
        }
        (Err(panic), Some(_)) => Verdict::Failed(format!(
            "insta failed after comparing: {}",
            panic_text(&*panic)
        )),
    }
}

/// What `insta::assert_json_snapshot!(name, value)` does, except that an I/O error of the
/// snapshot files is returned: the macro is this call followed by `.unwrap()`, which made a
/// file in place of the snapshot directory a panic quoting `Result::unwrap()`. The macro's
/// support functions are insta's (hidden) API; `Cargo.lock` pins the version they come from.
fn assert_json_snapshot(
    name: &str,
    value: &crate::json::selector::Shaped,
) -> Result<(), Box<dyn std::error::Error>> {
    use insta::_macro_support::{
        SerializationFormat, Workspace, assert_snapshot, get_cargo_workspace, serialize_value,
    };
    // `prepare_process` set INSTA_WORKSPACE_ROOT, which this reads first.
    let workspace = get_cargo_workspace(Workspace::DetectWithCargo(env!("CARGO_MANIFEST_DIR")));
    let text = serialize_value(value, SerializationFormat::Json);
    assert_snapshot(
        (name, text.as_str()).into(),
        workspace.as_path(),
        "assert_json",
        module_path!(),
        file!(),
        line!(),
        "value",
    )
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    crate::verdict::event::panic_message(payload)
        .unwrap_or_else(|| "insta panicked without a message".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_directory_is_refused_before_insta_runs() {
        let value = serde_json::json!({});
        let a = Assertion {
            dir: Path::new("snapshots"),
            name: "x",
            value: &value,
            scrub: &crate::json::selector::unchanged,
            redact: &[],
            sort: &[],
            description: "",
            input_file: None,
        };
        assert!(matches!(assert_json(&a), Verdict::Failed(m) if m.contains("not absolute")));
    }

    #[test]
    fn update_modes_map_to_insta_values() {
        assert_eq!(UpdateMode::Pending.insta_value(), "new");
        assert_eq!(UpdateMode::Overwrite.insta_value(), "always");
        assert_eq!(UpdateMode::Nothing.insta_value(), "no");
    }
}
