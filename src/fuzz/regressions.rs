//! Fuzz regressions are ordinary case files. Every minimal failing body the fuzzer finds is
//! saved, atomically and under a stable name (`<endpoint>-<property>-<hash>.json`), as a file of
//! one exchange case whose `expect.checks` are the fuzz properties: `run`, `list`, `diff` and
//! every other command that reads the case tree read it like any case, `run` judges its
//! response by those properties, and `fuzz` replays it before generating anything. Files of the
//! earlier `{"endpoint", "property", "body"}` format are read too, and converted by `fuzz`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use md5::{Digest, Md5};
use serde_json::{Map, Value, json};

use crate::case::model::{CaseKind, ExchangeCase};

use crate::atomic;
use crate::case::parse::{ParseContext, parse_file};
use crate::checks::ownership;
use crate::diag::Diagnostic;
use crate::fuzz::body::{FuzzBody, Limits};
use crate::fuzz::known::Known;
use crate::fuzz::properties::{self, PROPERTIES};
use crate::local_file::{self, Kind};
use crate::service::client::{Client, Response, Sent};
use crate::service::discover::Discovery;
use crate::spec::catalog;
use crate::spec::schemas::SchemaSet;
use crate::verdict::check::Check;
use crate::verdict::endpoint::{AuthMode, Endpoint};
use crate::verdict::event::Finding;

/// The tag of every saved regression case (`--filter tag:fuzz-regression`).
pub const TAG: &str = "fuzz-regression";

/// Identity variables written as `${NAME}` where a saved body holds exactly their value, so that
/// a regression follows the configured identity.
const TEMPLATED: &[&str] = &[
    "MALLCHECK_APPID",
    "MALLCHECK_MERCHANT_ID",
    "MALLCHECK_MERCHANT_USER_ID",
    "MALLCHECK_ROLE",
    "MALLCHECK_OTHER_MERCHANT_ID",
    "MALLCHECK_OTHER_MERCHANT_USER_ID",
    "MALLCHECK_UNKNOWN_MERCHANT_ID",
];

/// Extensions of the files read from the regressions directory (those of case files).
const EXTENSIONS: &[&str] = &["json", "yaml", "yml"];

/// A case that applies fuzz properties, ready to replay.
#[derive(Debug, Clone)]
pub struct Regression {
    /// The case file it came from.
    pub path: PathBuf,
    /// The case's name.
    pub name: String,
    /// The operation it is sent to.
    pub endpoint: Endpoint,
    /// The fuzz properties it checks.
    pub properties: Vec<&'static Check>,
    /// The body, variables substituted.
    pub body: FuzzBody,
}

/// A file of the earlier regression format, `{"endpoint", "property", "body"}`.
#[derive(Debug, Clone)]
pub struct Legacy {
    /// The file.
    pub path: PathBuf,
    /// The operation.
    pub endpoint: Endpoint,
    /// The property it broke when it was saved.
    pub property: &'static Check,
    /// The body.
    pub body: FuzzBody,
}

/// What the regressions directory holds.
#[derive(Debug, Default)]
pub struct Stored {
    /// Cases that apply fuzz properties, in file order.
    pub regressions: Vec<Regression>,
    /// Files of the earlier format, to convert into case files.
    pub legacy: Vec<Legacy>,
}

/// Where and how new regressions are saved: the directory, and what is needed to write (and
/// read back) a case file there.
#[derive(Debug, Clone)]
pub struct Saver {
    /// The regressions directory.
    pub dir: PathBuf,
    /// The variables case files are parsed with.
    pub vars: BTreeMap<String, String>,
    /// Valid `expect.schema` names.
    pub schema_names: Vec<String>,
    /// The session's redactor: a saved file is scrubbed with it.
    pub redactor: crate::redact::Redactor,
}

impl Saver {
    /// Saves a failing body as a case file `<endpoint>-<property>-<hash>.json` (the same failure
    /// is the same file), written atomically after checking that it reads back as the same
    /// request; returns the path.
    pub fn save(
        &self,
        endpoint: Endpoint,
        property: &Check,
        body: &FuzzBody,
        known: &Known,
    ) -> Result<PathBuf, String> {
        let hash = stable_hash(endpoint, property, body);
        let short = property.id.strip_prefix("fuzz.").unwrap_or(property.id);
        let path = self
            .dir
            .join(format!("{}-{short}-{hash}.json", endpoint.name()));
        let doc = case_document(endpoint, property, body, known, &self.vars, &hash);
        let text = case_text(&doc);
        let names: Vec<&str> = self.schema_names.iter().map(String::as_str).collect();
        let cx = ParseContext {
            vars: &self.vars,
            schema_names: &names,
        };
        let back = regressions_of(&path, text.clone(), &cx).map_err(|d| {
            format!(
                "the case file does not read back (a bug: please report it): {}",
                crate::diag::render(&d, false)
            )
        })?;
        if back.first().map(|r| r.body.to_bytes()) != Some(body.to_bytes()) {
            return Err(
                "the case file does not read back as the same body (a bug: please report it)"
                    .into(),
            );
        }
        atomic::write(&path, text.as_bytes(), &self.redactor)
            .map_err(|e| format!("cannot save to {}: {e}", self.dir.display()))?;
        Ok(path)
    }

    /// Converts a file of the earlier format into a case file (the old file is replaced, or
    /// removed when the new one has another name); returns the regressions it now holds.
    pub fn convert(&self, legacy: &Legacy, known: &Known) -> Result<Vec<Regression>, String> {
        let path = self.save(legacy.endpoint, legacy.property, &legacy.body, known)?;
        if path != legacy.path {
            std::fs::remove_file(&legacy.path)
                .map_err(|e| format!("cannot remove {}: {e}", legacy.path.display()))?;
        }
        let names: Vec<&str> = self.schema_names.iter().map(String::as_str).collect();
        let cx = ParseContext {
            vars: &self.vars,
            schema_names: &names,
        };
        let text = local_file::read_text(&path, Kind::CaseFile).map_err(|e| e.to_string())?;
        regressions_of(&path, text, &cx).map_err(|d| crate::diag::render(&d, false))
    }
}

/// The first ten hex digits of the md5 of the endpoint, the property and the body bytes: the
/// same failure gets the same name (as in the earlier format, so a conversion replaces the file).
fn stable_hash(endpoint: Endpoint, property: &Check, body: &FuzzBody) -> String {
    let mut hasher = Md5::new();
    hasher.update(endpoint.name());
    hasher.update(property.id);
    hasher.update(body.to_bytes());
    hex::encode(hasher.finalize())[..10].to_string()
}

/// Reads every case file (and every file of the earlier format) of `dir`, sorted by name; a
/// missing directory holds none. Err holds every problem of every file.
pub fn load(dir: &Path, cx: &ParseContext) -> Result<Stored, Vec<Diagnostic>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Stored::default()),
        Err(e) => {
            return Err(vec![Diagnostic::for_path(
                dir,
                format!("cannot read the regressions directory: {e}"),
            )]);
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| EXTENSIONS.iter().any(|e| x.eq_ignore_ascii_case(e)))
        })
        .collect();
    paths.sort();
    let mut stored = Stored::default();
    let mut diags = Vec::new();
    for path in paths {
        let text = match local_file::read_text(&path, Kind::CaseFile) {
            Ok(text) => text,
            Err(e) => {
                diags.push(Diagnostic::for_path(
                    &path,
                    format!("cannot read: {}", e.reason()),
                ));
                continue;
            }
        };
        if let Some(doc) = legacy_document(&text) {
            match parse_legacy(&doc) {
                Ok((endpoint, property, body)) => stored.legacy.push(Legacy {
                    path,
                    endpoint,
                    property,
                    body,
                }),
                Err(m) => diags.push(Diagnostic::for_path(&path, m)),
            }
            continue;
        }
        match regressions_of(&path, text, cx) {
            Ok(mut found) => stored.regressions.append(&mut found),
            Err(mut d) => diags.append(&mut d),
        }
    }
    if diags.is_empty() {
        Ok(stored)
    } else {
        Err(diags)
    }
}

/// The cases of one case file that apply fuzz properties.
fn regressions_of(
    path: &Path,
    text: String,
    cx: &ParseContext,
) -> Result<Vec<Regression>, Vec<Diagnostic>> {
    let file = parse_file(path, text, cx)?;
    Ok(file
        .cases
        .iter()
        .filter_map(|case| match &case.kind {
            CaseKind::Exchange(x) => {
                let properties = properties_of(x);
                (!properties.is_empty()).then(|| Regression {
                    path: path.to_path_buf(),
                    name: case.name.value.clone(),
                    endpoint: x.endpoint,
                    properties,
                    body: body_of(x),
                })
            }
            CaseKind::Walk(_) | CaseKind::ProductsSweep(_) | CaseKind::CrossMerchantCursor(_) => {
                None
            }
        })
        .collect())
}

/// The fuzz properties an exchange case lists in `expect.checks`.
pub fn properties_of(x: &ExchangeCase) -> Vec<&'static Check> {
    x.expect
        .checks
        .iter()
        .map(|c| c.check)
        .filter(|c| PROPERTIES.iter().any(|p| p.id == c.id))
        .collect()
}

/// The body an exchange case sends, as the fuzzer holds it.
pub fn body_of(x: &ExchangeCase) -> FuzzBody {
    let request = &x.request;
    if let Some(bytes) = &request.raw_hex {
        FuzzBody::Raw {
            label: "saved raw bytes".into(),
            bytes: bytes.value.clone(),
        }
    } else if let Some(raw) = &request.raw {
        FuzzBody::Raw {
            label: "saved raw body".into(),
            bytes: raw.value.as_bytes().to_vec(),
        }
    } else {
        FuzzBody::Json(request.body.as_ref().map_or(json!({}), |b| b.value.clone()))
    }
}

/// The document, when `text` is a file of the earlier format (an object with a `property` and
/// no `cases`).
fn legacy_document(text: &str) -> Option<Value> {
    let doc: Value = serde_json::from_str(text).ok()?;
    (doc.get("property").is_some() && doc.get("cases").is_none()).then_some(doc)
}

fn parse_legacy(doc: &Value) -> Result<(Endpoint, &'static Check, FuzzBody), String> {
    let field = |k: &str| doc.get(k).and_then(Value::as_str);
    let endpoint = field("endpoint")
        .and_then(|name| {
            [Endpoint::MallList, Endpoint::MallProducts]
                .into_iter()
                .find(|e| e.name() == name)
        })
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
            label: "saved raw bytes".into(),
            bytes: hex::decode(h).map_err(|e| format!("\"raw_hex\" is not hex: {e}"))?,
        },
        _ => return Err("exactly one of \"body\", \"raw\" or \"raw_hex\" is required".into()),
    };
    Ok((endpoint, property, body))
}

/// The case file of a failing body: one exchange case, tagged [`TAG`], that applies every fuzz
/// property, with the schema check off (the error shape is open; a success is checked by
/// `fuzz.success-contract`).
pub fn case_document(
    endpoint: Endpoint,
    property: &Check,
    body: &FuzzBody,
    known: &Known,
    vars: &BTreeMap<String, String>,
    hash: &str,
) -> Value {
    let mut request = Map::new();
    match body {
        FuzzBody::Json(v) => {
            request.insert("body".into(), template(v, vars));
        }
        FuzzBody::Raw { bytes, .. } => match std::str::from_utf8(bytes) {
            Ok(text) => {
                request.insert("raw".into(), json!(escape_vars(text)));
            }
            Err(_) => {
                request.insert("raw-hex".into(), json!(hex::encode(bytes)));
            }
        },
    }
    let mut checks: Vec<Value> = PROPERTIES.iter().map(|p| json!(p.id)).collect();
    let mut expect = Map::new();
    expect.insert("schema".into(), json!("none"));
    match ownership_expectation(endpoint, body, known) {
        Some(Expectation::Check(c)) => checks.push(json!(c.id)),
        Some(Expectation::NoData(c)) => {
            expect.insert("no-data".into(), json!(c.id));
        }
        None => {}
    }
    expect.insert("checks".into(), Value::Array(checks));
    json!({"cases": [{
        "name": format!("{} on {} ({hash})", property.id, endpoint.name()),
        "tags": [TAG],
        "endpoint": endpoint.name(),
        "request": request,
        "expect": expect,
    }]})
}

/// An expectation that `run` cannot derive from the body alone because it takes what the
/// fuzzer learnt about the service: which merchant owns a mall, which merchant does not exist.
enum Expectation {
    /// Also run this check (`ownership.unknown-merchant`).
    Check(&'static Check),
    /// The response must carry no merchant data, reported under this check.
    NoData(&'static Check),
}

fn ownership_expectation(
    endpoint: Endpoint,
    body: &FuzzBody,
    known: &Known,
) -> Option<Expectation> {
    let json = body.json()?;
    match endpoint {
        Endpoint::MallList => {
            let merchant = ownership::requested_merchant(json)?;
            known
                .unknown_merchant_ids
                .iter()
                .any(|u| u == merchant)
                .then_some(Expectation::Check(&catalog::OWNERSHIP_UNKNOWN_MERCHANT))
        }
        Endpoint::MallProducts => {
            let mall = json
                .pointer("/mallID/mallSn")
                .and_then(Value::as_str)
                .and_then(|sn| known.mall(sn))?;
            let seller = json.pointer("/seller/merchantId").and_then(Value::as_str);
            let signature = json.pointer("/mallID/signature").and_then(Value::as_str);
            if seller != Some(mall.owner.as_str()) {
                Some(Expectation::NoData(&catalog::PRODUCTS_SELLER_BOUND))
            } else if signature != Some(mall.signature.as_str()) {
                Some(Expectation::NoData(&catalog::PRODUCTS_SIGNATURE_BOUND))
            } else {
                None
            }
        }
    }
}

/// `value` with every string that is exactly an identity variable's value written as
/// `${NAME}`, and every other `${` escaped as `$${` (case-file strings are substituted).
fn template(value: &Value, vars: &BTreeMap<String, String>) -> Value {
    match value {
        Value::String(s) => {
            let var = TEMPLATED.iter().find(|name| {
                vars.get(**name)
                    .is_some_and(|v| !v.is_empty() && v.as_str() == s.as_str())
            });
            match var {
                Some(name) => Value::String(format!("${{{name}}}")),
                None => Value::String(escape_vars(s)),
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| template(v, vars)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), template(v, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn escape_vars(s: &str) -> String {
    s.replace("${", "$${")
}

/// Pretty JSON in which every character a YAML parser (case files are read by one) would not
/// take literally inside a quoted string is a `\uXXXX` escape: controls, DEL, C1 controls,
/// line and paragraph separators, the byte order mark and non-characters. Outside strings the
/// text is ASCII, so escaping character by character is safe.
pub fn case_text(doc: &Value) -> String {
    let pretty = serde_json::to_string_pretty(doc).expect("a serde_json::Value always serializes");
    let mut out = String::with_capacity(pretty.len() + 1);
    for c in pretty.chars() {
        let literal = matches!(c, '\n' | ' '..='~' | '\u{a0}'..='\u{2027}' | '\u{202a}'..='\u{d7ff}' | '\u{e000}'..='\u{fefe}' | '\u{ff00}'..='\u{fffd}')
            || c >= '\u{10000}';
        if literal {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        }
    }
    out.push('\n');
    out
}

/// Sends a regression case's request exactly as the fuzzer sent it when it found it, and as
/// `fuzz` replays it: the saved bytes, signed with the configured signer, no extra header, and
/// the body's appid in the Authorization header only when it fits there within the common
/// limits (else the configured appid), the rule of a fuzz run without `--oversize`. An `auth`
/// mode or `headers` written into the case are not applied: they are not part of the request
/// the fuzzer found (a case that needs them is an ordinary case, without fuzz properties).
/// For `run`. Err is the reason the case cannot run.
pub async fn send(
    client: &Client,
    discovery: &Discovery,
    x: &ExchangeCase,
) -> Result<(Sent, FuzzBody), String> {
    let mut body = body_of(x);
    if let FuzzBody::Json(v) = &mut body {
        discovery.resolve(client, v).await?;
    }
    let appid = body
        .header_appid(discovery.appid(), &Limits::COMMON)
        .to_string();
    let sent = client
        .send_raw(x.endpoint, body.to_bytes(), &appid, &AuthMode::Signed, &[])
        .await;
    Ok((sent, body))
}

/// What a regression case's fuzz properties find in its response, for `run`. Ownership is
/// judged from the body (the case file carries what needs the fuzzer's knowledge); a 5xx is
/// left to `http.server-error`, which `run` checks on every case.
pub fn judge(
    endpoint: Endpoint,
    body: &FuzzBody,
    response: &Response,
    schemas: &SchemaSet,
    listed: &[&'static Check],
) -> Vec<Finding> {
    let known = Known {
        appid: String::new(),
        identities: Vec::new(),
        unknown_merchant_ids: Vec::new(),
        malls: Vec::new(),
        target_mall: None,
        notes: Vec::new(),
        lists_no_mall: false,
    };
    // The 5xx is judged apart (`run` says it as robustness), so the gate does not matter here.
    properties::evaluate_response(
        endpoint,
        body,
        response,
        schemas,
        &known,
        crate::checks::robustness::RobustnessGate::Fail,
    )
    .into_iter()
    .filter(|v| v.property.id != catalog::FUZZ_NO_SERVER_ERROR.id)
    .filter(|v| listed.iter().any(|p| p.id == v.property.id))
    .flat_map(|v| v.findings)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::known::Identity;
    use crate::fuzz::strategies;
    use proptest::prelude::*;

    fn vars() -> BTreeMap<String, String> {
        crate::case::vars::KNOWN_VARS
            .iter()
            .map(|k| (k.to_string(), format!("v-{k}")))
            .collect()
    }

    fn known() -> Known {
        Known {
            appid: "v-MALLCHECK_APPID".into(),
            identities: vec![Identity {
                merchant_id: "v-MALLCHECK_MERCHANT_ID".into(),
                merchant_user_id: "v-MALLCHECK_MERCHANT_USER_ID".into(),
                role: "super_admin".into(),
            }],
            unknown_merchant_ids: vec!["v-MALLCHECK_UNKNOWN_MERCHANT_ID".into()],
            ..crate::fuzz::known::example()
        }
    }

    fn saver(dir: &Path) -> Saver {
        Saver {
            dir: dir.to_path_buf(),
            vars: vars(),
            schema_names: vec!["mall-list-response".into(), "products-response".into()],
            redactor: crate::redact::Redactor::new(),
        }
    }

    fn reload(s: &Saver) -> Stored {
        let names: Vec<&str> = s.schema_names.iter().map(String::as_str).collect();
        let cx = ParseContext {
            vars: &s.vars,
            schema_names: &names,
        };
        load(&s.dir, &cx).unwrap_or_else(|d| panic!("{}", crate::diag::render(&d, false)))
    }

    #[test]
    fn saved_bodies_are_case_files_that_load_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let s = saver(dir.path());
        let json = FuzzBody::Json(json!({
            "appid": "v-MALLCHECK_APPID",
            "filter": {"seller": {"merchantId": "v-MALLCHECK_MERCHANT_ID", "role": "${jndi:x}"}},
            "cursor": {"count": 81, "endCursor": "$${MALLCHECK_APPID}"},
        }));
        let raw = FuzzBody::Raw {
            label: "x".into(),
            bytes: vec![b'{', 0xff],
        };
        let text = FuzzBody::Raw {
            label: "x".into(),
            bytes: "\u{feff}{\"a\":\"${x}\u{2028}\"}".as_bytes().to_vec(),
        };
        let save_json = || {
            s.save(
                Endpoint::MallList,
                &catalog::FUZZ_NO_SERVER_ERROR,
                &json,
                &known(),
            )
            .unwrap()
        };
        let p1 = save_json();
        let again = save_json();
        assert_eq!(p1, again, "the same failure is one file");
        let name = p1.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("mall-list-no-server-error-") && name.ends_with(".json"),
            "{name}"
        );
        let saved = std::fs::read_to_string(&p1).unwrap();
        assert!(
            saved.contains("\"appid\": \"${MALLCHECK_APPID}\""),
            "{saved}"
        );
        assert!(saved.contains("\"role\": \"$${jndi:x}\""), "{saved}");
        s.save(
            Endpoint::MallProducts,
            &catalog::FUZZ_TIMELY,
            &raw,
            &known(),
        )
        .unwrap();
        s.save(Endpoint::MallList, &catalog::FUZZ_JSON, &text, &known())
            .unwrap();
        std::fs::write(dir.path().join("README.md"), "not a regression").unwrap();
        let loaded = reload(&s).regressions;
        assert_eq!(loaded.len(), 3);
        let of = |e: Endpoint, b: &FuzzBody| {
            loaded
                .iter()
                .find(|r| r.endpoint == e && r.body.to_bytes() == b.to_bytes())
                .unwrap_or_else(|| panic!("{b:?} not loaded back: {loaded:?}"))
        };
        let first = of(Endpoint::MallList, &json);
        assert_eq!(first.properties.len(), PROPERTIES.len());
        assert!(
            first
                .name
                .starts_with("fuzz.no-server-error on mall-list (")
        );
        of(Endpoint::MallProducts, &raw);
        of(Endpoint::MallList, &text);
    }

    #[test]
    fn the_configured_role_is_written_as_its_variable() {
        let dir = tempfile::tempdir().unwrap();
        let s = saver(dir.path());
        let body = FuzzBody::Json(json!({
            "filter": {"seller": {
                "merchantId": "v-MALLCHECK_MERCHANT_ID",
                "merchantUserId": "v-MALLCHECK_MERCHANT_USER_ID",
                "role": "v-MALLCHECK_ROLE",
            }},
            "cursor": {"count": 81},
        }));
        let path = s
            .save(
                Endpoint::MallList,
                &catalog::FUZZ_NO_SERVER_ERROR,
                &body,
                &known(),
            )
            .unwrap();
        let saved = std::fs::read_to_string(path).unwrap();
        assert!(saved.contains("\"role\": \"${MALLCHECK_ROLE}\""), "{saved}");
        let loaded = reload(&s).regressions;
        assert_eq!(loaded[0].body.to_bytes(), body.to_bytes());
    }

    #[test]
    fn ownership_that_needs_the_fuzzers_knowledge_is_written_into_the_case() {
        let doc = |endpoint, body: Value| {
            let d = case_document(
                endpoint,
                &catalog::FUZZ_OWNERSHIP,
                &FuzzBody::Json(body),
                &known(),
                &vars(),
                "h",
            );
            d["cases"][0]["expect"].clone()
        };
        let foreign = doc(
            Endpoint::MallProducts,
            json!({"seller": {"merchantId": "m1"}, "mallID": {"mallSn": "7", "signature": "s7"}}),
        );
        assert_eq!(foreign["no-data"], "products.seller-bound");
        let tampered = doc(
            Endpoint::MallProducts,
            json!({"seller": {"merchantId": "m2"}, "mallID": {"mallSn": "7", "signature": "x"}}),
        );
        assert_eq!(tampered["no-data"], "products.signature-bound");
        let unknown = doc(
            Endpoint::MallList,
            json!({"filter": {"seller": {"merchantId": "v-MALLCHECK_UNKNOWN_MERCHANT_ID"}}}),
        );
        assert!(
            unknown["checks"]
                .as_array()
                .unwrap()
                .contains(&json!("ownership.unknown-merchant")),
            "{unknown}"
        );
        assert_eq!(unknown["schema"], "none");
    }

    #[test]
    fn a_file_of_the_earlier_format_is_converted_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let s = saver(dir.path());
        let body = FuzzBody::Json(json!({"cursor": {"count": 81}}));
        let hash = stable_hash(Endpoint::MallList, &catalog::FUZZ_NO_SERVER_ERROR, &body);
        let old = dir
            .path()
            .join(format!("mall-list-no-server-error-{hash}.json"));
        std::fs::write(
            &old,
            r#"{"endpoint": "mall-list", "property": "fuzz.no-server-error", "body": {"cursor": {"count": 81}}}"#,
        )
        .unwrap();
        let renamed = dir.path().join("mine.json");
        std::fs::write(
            &renamed,
            r#"{"endpoint": "mall-products", "property": "fuzz.timely", "raw_hex": "7bff"}"#,
        )
        .unwrap();
        let stored = reload(&s);
        assert!(stored.regressions.is_empty());
        assert_eq!(stored.legacy.len(), 2);
        for legacy in &stored.legacy {
            let now = s.convert(legacy, &known()).unwrap();
            assert_eq!(now.len(), 1);
            assert_eq!(now[0].body.to_bytes(), legacy.body.to_bytes());
        }
        assert!(old.exists(), "replaced under the same name");
        assert!(
            !renamed.exists(),
            "a file under another name is replaced by the new one"
        );
        let again = reload(&s);
        assert_eq!((again.regressions.len(), again.legacy.len()), (2, 0));
    }

    #[test]
    fn a_bad_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let s = saver(dir.path());
        assert!(
            reload(&saver(&dir.path().join("nope")))
                .regressions
                .is_empty()
        );
        std::fs::write(
            dir.path().join("bad.json"),
            r#"{"endpoint": "mall-list", "property": "mall.state", "body": {}}"#,
        )
        .unwrap();
        let names: Vec<&str> = vec![];
        let cx = ParseContext {
            vars: &s.vars,
            schema_names: &names,
        };
        let diags = load(dir.path(), &cx).unwrap_err();
        let text = crate::diag::render(&diags, false);
        assert!(
            text.contains("bad.json") && text.contains("fuzz.*"),
            "{text}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

        /// Any generated value, in a body or as a raw text, survives the case file.
        #[test]
        fn any_generated_value_reads_back_the_same(value in strategies::json_any(), text in strategies::text(40)) {
            let dir = tempfile::tempdir().unwrap();
            let s = saver(dir.path());
            for body in [
                FuzzBody::Json(json!({"appid": value.clone(), "extra": [value.clone(), text.clone()]})),
                FuzzBody::Raw { label: "t".into(), bytes: text.clone().into_bytes() },
            ] {
                let saved = s.save(Endpoint::MallList, &catalog::FUZZ_JSON, &body, &known());
                prop_assert!(saved.is_ok(), "{:?}: {:?}", body, saved);
            }
        }
    }
}
