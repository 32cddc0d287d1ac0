//! `mallcheck openapi`: writes the OpenAPI 3.1 document built from the schemas.

use crate::app::run::load_schemas;
use crate::atomic;
use crate::cli::OpenapiArgs;
use crate::error::UsageError;
use crate::exit;
use crate::redact::Redactor;
use crate::spec::openapi::document;

/// Runs `mallcheck openapi`.
pub fn openapi(args: &OpenapiArgs, redactor: &Redactor) -> Result<i32, UsageError> {
    let schemas = load_schemas(args.schemas.as_ref())?;
    let doc = document(&schemas).map_err(|e| UsageError::setting(e.what, e.message, None))?;
    let mut text = serde_json::to_string_pretty(&doc)
        .map_err(|e| UsageError::setting("openapi", format!("cannot serialise: {e}"), None))?;
    text.push('\n');
    match &args.output {
        Some(path) => {
            atomic::write(path, text.as_bytes(), redactor).map_err(|source| UsageError::Io {
                path: path.clone(),
                source,
            })?;
            crate::say::stderr_line!("wrote the OpenAPI 3.1 document to {}", path.display());
        }
        None => crate::say::stdout_document(&text).map_err(UsageError::stdout)?,
    }
    Ok(exit::PASS)
}
