//! The files mallcheck ships, built into the binary so that it works outside a checkout: the
//! case files of `cases/` (run when the working directory has no `cases/` and no `--cases` is
//! given) and the schema files of `schemas/` (written out by `mallcheck init`).

use std::path::{Path, PathBuf};

/// Prefix of the paths diagnostics and reports give to a shipped file that was not read from
/// disk, e.g. `<shipped>/cases/paging.yaml`.
pub const EMBEDDED_ROOT: &str = "<shipped>";

/// Directory of the case files, in a checkout and where `init` writes them.
pub const CASES_DIR: &str = "cases";

/// Directory of the schema files, in a checkout and where `init` writes them.
pub const SCHEMAS_DIR: &str = "schemas";

macro_rules! files {
    ($dir:literal: $($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../", $dir, "/", $name)))),*]
    };
}

/// The shipped case files: file name and text, in the order a directory is read (sorted).
pub const CASE_FILES: &[(&str, &str)] = files!["cases":
    "auth.yaml",
    "mall-list.yaml",
    "mall-products.yaml",
    "ownership.yaml",
    "paging.yaml",
    "snapshots.yaml",
];

/// Every file of `schemas/`: the response and request schemas and the case-file schema that
/// editors read.
pub const SCHEMA_FILES: &[(&str, &str)] = files!["schemas":
    "case.schema.json",
    "common.json",
    "content-block.json",
    "cross-city-payment.json",
    "mall-list-request.json",
    "mall-list-response.json",
    "mall.json",
    "order-statistics.json",
    "product-introduction.json",
    "product.json",
    "products-request.json",
    "products-response.json",
    "seller-identity.json",
    "seller-statistics.json",
    "seller.json",
    "sku.json",
];

/// The path a shipped case file is named by when it comes from the binary.
pub fn embedded_case_path(name: &str) -> PathBuf {
    Path::new(EMBEDDED_ROOT).join(CASES_DIR).join(name)
}

/// Whether the working directory has a `cases/` of its own, which replaces the shipped cases.
pub fn local_cases_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(CASES_DIR);
    dir.is_dir().then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of the directory, hidden ones and subdirectories aside.
    fn listed(dir: &str, extensions: &[&str]) -> Vec<String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        let mut names: Vec<String> = std::fs::read_dir(root)
            .expect("read dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.is_file())
            .filter(|p| {
                p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| extensions.contains(&e))
            })
            .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn every_case_file_of_the_checkout_is_shipped() {
        let shipped: Vec<&str> = CASE_FILES.iter().map(|(n, _)| *n).collect();
        assert_eq!(shipped, listed(CASES_DIR, &["yaml", "yml", "json"]));
    }

    #[test]
    fn every_schema_file_of_the_checkout_is_shipped() {
        let mut shipped: Vec<&str> = SCHEMA_FILES.iter().map(|(n, _)| *n).collect();
        shipped.sort_unstable();
        assert_eq!(shipped, listed(SCHEMAS_DIR, &["json"]));
    }

    #[test]
    fn an_embedded_case_path_says_where_it_comes_from() {
        assert_eq!(
            embedded_case_path("paging.yaml"),
            Path::new("<shipped>/cases/paging.yaml")
        );
    }
}
