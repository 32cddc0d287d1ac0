//! Readable differences between a recorded snapshot and a new one: the changed fields by JSON
//! Pointer, then a unified diff of the texts.

use serde_json::Value;
use similar::TextDiff;

use crate::snapshot::classify::{self, Change, Contract};

/// Most diff lines shown for one snapshot.
pub const MAX_DIFF_LINES: usize = 120;
/// Most changed fields listed for one snapshot.
pub const MAX_FIELDS: usize = 10;

/// A unified diff of two texts with three lines of context, cut after `max_lines` lines.
pub fn unified(old: &str, new: &str, old_label: &str, new_label: &str, max_lines: usize) -> String {
    let diff = TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(old_label, new_label)
        .to_string();
    let total = text.lines().count();
    if total <= max_lines {
        return text.trim_end().to_string();
    }
    let kept: Vec<&str> = text.lines().take(max_lines).collect();
    format!(
        "{}\n… ({} more diff lines)",
        kept.join("\n"),
        total - max_lines
    )
}

/// The field-level changes between two snapshot texts, when both are JSON.
pub fn field_changes(old: &str, new: &str) -> Option<Vec<Change>> {
    let old: Value = serde_json::from_str(old).ok()?;
    let new: Value = serde_json::from_str(new).ok()?;
    Some(classify::compare(&old, &new, &Contract::default()))
}

/// One line per changed field (at most [`MAX_FIELDS`], then a count).
pub fn field_lines(changes: &[Change]) -> Vec<String> {
    let mut lines: Vec<String> = changes
        .iter()
        .take(MAX_FIELDS)
        .map(|c| {
            let at = if c.pointer.is_empty() {
                "(root)"
            } else {
                &c.pointer
            };
            match &c.record {
                Some(r) => format!("{at} ({r}): {}", c.describe()),
                None => format!("{at}: {}", c.describe()),
            }
        })
        .collect();
    if changes.len() > MAX_FIELDS {
        lines.push(format!(
            "… and {} more changed field(s)",
            changes.len() - MAX_FIELDS
        ));
    }
    lines
}

/// The full explanation of a difference: changed fields, then the unified diff.
pub fn explain(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    let mut out = String::new();
    if let Some(changes) = field_changes(old, new).filter(|c| !c.is_empty()) {
        out.push_str("changed fields:\n");
        for line in field_lines(&changes) {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out.push_str(&unified(old, new, old_label, new_label, MAX_DIFF_LINES));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_diff_marks_the_changed_line_with_context() {
        let old = "{\n  \"a\": 1,\n  \"state\": 1\n}";
        let new = "{\n  \"a\": 1,\n  \"state\": 3\n}";
        let d = unified(old, new, "x.snap", "new", 100);
        assert!(d.contains("--- x.snap"), "{d}");
        assert!(d.contains("-  \"state\": 1"), "{d}");
        assert!(d.contains("+  \"state\": 3"), "{d}");
        assert!(d.contains("   \"a\": 1,"), "{d}");
    }

    #[test]
    fn long_diffs_are_cut_with_a_count() {
        let old: String = (0..100).map(|i| format!("{i}\n")).collect();
        let new: String = (0..100).map(|i| format!("x{i}\n")).collect();
        let d = unified(&old, &new, "a", "b", 10);
        assert_eq!(d.lines().count(), 11);
        assert!(d.ends_with("more diff lines)"), "{d}");
    }

    #[test]
    fn explanation_names_the_field_by_pointer() {
        let old = r#"{"data": [{"mallSn": "1", "state": 1}]}"#;
        let new = r#"{"data": [{"mallSn": "1", "state": 3}]}"#;
        let e = explain(old, new, "a", "b");
        assert!(
            e.contains("/data/0/state (mallSn 1): value changed: 1 → 3"),
            "{e}"
        );
    }

    #[test]
    fn field_list_is_capped() {
        let old: Value = serde_json::json!({"xs": (0..20).collect::<Vec<_>>()});
        let new: Value = serde_json::json!({"xs": (100..120).collect::<Vec<_>>()});
        let changes = classify::compare(&old, &new, &Contract::default());
        let lines = field_lines(&changes);
        assert_eq!(lines.len(), MAX_FIELDS + 1);
        assert!(lines[MAX_FIELDS].contains("more changed field"));
    }
}
