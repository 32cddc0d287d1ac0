//! mallcheck's only calls into jsonschema's validator: building one and running it.
//!
//! Why a crate of its own: jsonschema 0.60 is generic over the JSON type (`Validator<F: Json>`,
//! `ValidationOptions<'_, R, F>::build`), so its whole schema compiler and validator are
//! instantiated in whichever crate calls them. Called from mallcheck, they were optimised at
//! opt-level 3 as part of mallcheck itself: 12 % of its LLVM IR, on the critical path of a release
//! build, for the slow path that runs only after the typed read found a problem. Here nothing is
//! generic, so they are instantiated once, in this small crate, at the opt-level the release
//! profile gives it, while the rest of the dependencies build; no caller can instantiate them again
//! because the validator is only reachable through [`CompiledSchema`].

use jsonschema::{ErrorIterator, ValidationError, ValidationOptions, Validator};
use serde_json::Value;

/// A compiled schema document (jsonschema's `Validator` over `serde_json::Value`).
pub struct CompiledSchema(Validator);

impl CompiledSchema {
    /// Compiles `schema` with `options`.
    ///
    /// # Errors
    /// jsonschema's error when `schema` does not compile (bad keyword value, unresolvable `$ref`).
    pub fn build(
        options: &ValidationOptions<'_>,
        schema: &Value,
    ) -> Result<Self, ValidationError<'static>> {
        options.build(schema).map(Self)
    }

    /// Whether `instance` is valid (stops at the first error).
    #[must_use]
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.0.is_valid(instance)
    }

    /// Every error of `instance`.
    pub fn iter_errors<'i>(&'i self, instance: &'i Value) -> ErrorIterator<'i> {
        self.0.iter_errors(instance)
    }
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CompiledSchema").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builds_and_validates_through_the_wrapper() {
        let schema = json!({"type": "object", "required": ["mallSn"],
            "properties": {"mallSn": {"type": "string"}}});
        let compiled = CompiledSchema::build(&jsonschema::options(), &schema).expect("compiles");
        assert!(compiled.is_valid(&json!({"mallSn": "M1"})));
        let broken = json!({"mallSn": 1});
        assert!(!compiled.is_valid(&broken));
        let errors: Vec<String> = compiled
            .iter_errors(&broken)
            .map(|e| e.to_string())
            .collect();
        assert_eq!(errors, ["1 is not of type \"string\""]);
        assert!(CompiledSchema::build(&jsonschema::options(), &json!({"type": 12})).is_err());
    }
}
