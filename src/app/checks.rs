//! `mallcheck checks`: prints the catalogue.

use crate::cli::ChecksArgs;
use crate::error::UsageError;
use crate::exit;
use crate::spec::catalog::CATALOG;

/// Prints every check as a table (or JSON).
pub fn checks(args: &ChecksArgs) -> Result<i32, UsageError> {
    let text = if args.json {
        serde_json::to_string_pretty(CATALOG)
            .map_err(|e| UsageError::setting("--json", e.to_string(), None))?
            + "\n"
    } else {
        let width = CATALOG.iter().map(|c| c.id.len()).max().unwrap_or(0);
        let mut s = format!(
            "{:<width$}  {:<8}  {:<9}  {}\n",
            "ID", "SEVERITY", "SPEC", "ENFORCES"
        );
        for c in CATALOG {
            s.push_str(&format!(
                "{:<width$}  {:<8}  {:<9}  {}\n",
                c.id,
                c.severity.to_string(),
                c.section,
                c.summary
            ));
        }
        s
    };
    crate::say::stdout_document(&text).map_err(UsageError::stdout)?;
    Ok(exit::PASS)
}
