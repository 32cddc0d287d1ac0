//! The regressions directory: one JSON file per minimal failing body
//! (`{"endpoint", "property", "body"}`, or `"raw"`/`"raw_hex"` for bytes that are not JSON),
//! saved when a failure is found and replayed before any generated body on every later run.

use std::path::{Path, PathBuf};

use md5::{Digest, Md5};
use serde_json::{Map, Value, json};

use crate::atomic;
use crate::fuzz::body::FuzzBody;
use crate::spec::catalog;
use crate::verdict::check::Check;
use crate::verdict::endpoint::Endpoint;

/// A saved minimal failing body.
#[derive(Debug, Clone)]
pub struct Regression {
    /// The file it came from.
    pub path: PathBuf,
    /// The operation it is sent to.
    pub endpoint: Endpoint,
    /// The property it broke when it was saved.
    pub property: &'static Check,
    /// The body.
    pub body: FuzzBody,
}

/// Why the regressions directory could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct RegressionError {
    /// The file or directory.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

fn endpoint_named(name: &str) -> Option<Endpoint> {
    [Endpoint::MallList, Endpoint::MallProducts]
        .into_iter()
        .find(|e| e.name() == name)
}

/// Reads every `*.json` file of `dir` (sorted by name); a missing directory holds none.
pub fn load(dir: &Path) -> Result<Vec<Regression>, RegressionError> {
    let fail = |path: &Path, message: String| RegressionError {
        path: path.to_path_buf(),
        message,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(fail(dir, e.to_string())),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).map_err(|e| fail(&path, e.to_string()))?;
            parse(&text)
                .map_err(|m| fail(&path, m))
                .map(|(endpoint, property, body)| Regression {
                    path,
                    endpoint,
                    property,
                    body,
                })
        })
        .collect()
}

fn parse(text: &str) -> Result<(Endpoint, &'static Check, FuzzBody), String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let field = |k: &str| doc.get(k).and_then(Value::as_str);
    let endpoint = field("endpoint")
        .and_then(endpoint_named)
        .ok_or("\"endpoint\" must be \"mall-list\" or \"mall-products\"")?;
    let property = field("property")
        .and_then(catalog::find)
        .filter(|c| c.id.starts_with("fuzz."))
        .ok_or("\"property\" must be a fuzz.* check id")?;
    let body = match (doc.get("body"), field("raw"), field("raw_hex")) {
        (Some(body), None, None) => FuzzBody::Json(body.clone()),
        (None, Some(raw), None) => FuzzBody::Raw {
            label: "saved raw body".into(),
            bytes: raw.as_bytes().to_vec(),
        },
        (None, None, Some(h)) => FuzzBody::Raw {
            label: "saved raw body".into(),
            bytes: hex::decode(h).map_err(|e| format!("\"raw_hex\" is not hex: {e}"))?,
        },
        _ => return Err("exactly one of \"body\", \"raw\" or \"raw_hex\" is required".into()),
    };
    Ok((endpoint, property, body))
}

/// The file content for a failing body.
pub fn to_json(endpoint: Endpoint, property: &Check, body: &FuzzBody) -> Value {
    let mut doc = Map::new();
    doc.insert("endpoint".into(), json!(endpoint.name()));
    doc.insert("property".into(), json!(property.id));
    match body {
        FuzzBody::Json(v) => {
            doc.insert("body".into(), v.clone());
        }
        FuzzBody::Raw { bytes, .. } => match std::str::from_utf8(bytes) {
            Ok(text) => {
                doc.insert("raw".into(), json!(text));
            }
            Err(_) => {
                doc.insert("raw_hex".into(), json!(hex::encode(bytes)));
            }
        },
    }
    Value::Object(doc)
}

/// Saves a failing body as `<endpoint>-<property>-<hash>.json` (the same failure is saved
/// once); returns the path.
pub fn save(
    dir: &Path,
    endpoint: Endpoint,
    property: &Check,
    body: &FuzzBody,
) -> std::io::Result<PathBuf> {
    let mut hasher = Md5::new();
    hasher.update(endpoint.name());
    hasher.update(property.id);
    hasher.update(body.to_bytes());
    let hash = hex::encode(hasher.finalize());
    let short = property.id.strip_prefix("fuzz.").unwrap_or(property.id);
    let path = dir.join(format!("{}-{short}-{}.json", endpoint.name(), &hash[..10]));
    let mut text = serde_json::to_string_pretty(&to_json(endpoint, property, body))
        .expect("a serde_json::Value always serializes");
    text.push('\n');
    atomic::write(&path, text.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_bodies_load_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let json = FuzzBody::Json(json!({"cursor": {"count": 81}}));
        let raw = FuzzBody::Raw {
            label: "x".into(),
            bytes: vec![b'{', 0xff],
        };
        let p1 = save(
            dir.path(),
            Endpoint::MallList,
            &catalog::FUZZ_NO_SERVER_ERROR,
            &json,
        )
        .unwrap();
        let again = save(
            dir.path(),
            Endpoint::MallList,
            &catalog::FUZZ_NO_SERVER_ERROR,
            &json,
        )
        .unwrap();
        assert_eq!(p1, again, "the same failure is one file");
        save(
            dir.path(),
            Endpoint::MallProducts,
            &catalog::FUZZ_TIMELY,
            &raw,
        )
        .unwrap();
        std::fs::write(dir.path().join("README.md"), "not a regression").unwrap();
        let loaded = load(dir.path()).unwrap();
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded[0].endpoint, Endpoint::MallList);
        assert_eq!(loaded[0].body, json);
        assert_eq!(loaded[1].property.id, "fuzz.timely");
        assert_eq!(loaded[1].body.to_bytes(), vec![b'{', 0xff]);
    }

    #[test]
    fn a_missing_directory_holds_nothing_and_a_bad_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load(&dir.path().join("nope")).unwrap().is_empty());
        std::fs::write(
            dir.path().join("bad.json"),
            r#"{"endpoint": "mall-list", "property": "mall.state", "body": {}}"#,
        )
        .unwrap();
        let err = load(dir.path()).unwrap_err();
        assert!(
            err.to_string().contains("bad.json") && err.to_string().contains("fuzz.*"),
            "{err}"
        );
    }
}
