//! The differential test of the fast path (issue 24): over generated and mutated answers (mall
//! pages, products, envelopes, and every record fault and spelling fault of the reference
//! server), the fast path (`LazyJson::parse` with its digest, and each check's answer from the
//! digest) and the tree path (`LazyJson::parse_tree`, every check over the tree) give the same
//! verdict and the same findings.

use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::checks::{conforming, ownership, payload, products};
use crate::runner::preflight;
use crate::server::data::{self, Dataset, MAIN, OTHER, Shape};
use crate::server::faults::Fault;
use crate::service::lazy_json::LazyJson;
use crate::spec::catalog;
use crate::spec::schemas::{MAX_FINDINGS, SchemaSet};
use crate::verdict::event::Finding;
use crate::verdict::findings::Findings;

/// Documents the test runs through both paths.
const DOCUMENTS: usize = 10_000;

/// A small deterministic generator (splitmix64): the same documents on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n.max(1) as u64)).unwrap_or(0)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Everything a finding says.
fn said(findings: &[Finding]) -> Vec<String> {
    findings
        .iter()
        .map(|f| {
            format!(
                "{} {} [{}] | {} | {} | {}",
                f.check.id, f.check.section, f.pointer, f.expected, f.actual, f.detail
            )
        })
        .collect()
}

/// What the checks of a run and of the fuzzer say of one answer, through the digest where
/// the code under test uses it (`fast`), or over the tree alone (the tree path).
/// `name` is the schema the fast path read the body as (the other one's check takes the tree
/// in both paths: only the scan's findings differ in how they are found, compared here too).
fn verdicts(schemas: &SchemaSet, json: &LazyJson, name: &str, fast: bool) -> Vec<String> {
    let mut out = vec![format!("scan: {:?}", said(&json.findings()))];
    let digest = if fast { json.digest() } else { None };
    let mut found = Findings::new(MAX_FINDINGS);
    if !schemas.conforms(name, digest) {
        found.extend(json.findings());
        schemas.check_into(name, json, &mut found);
        json.spell(found.kept_mut());
    }
    out.push(format!("{name}: {:?}", said(&found.into_vec())));
    let no_data = if conforming::carries_no_records(digest) {
        vec![]
    } else {
        payload::no_data(&catalog::AUTH_REQUIRED, json)
    };
    out.push(format!("no-data: {:?}", said(&no_data)));
    for merchant in [MAIN.merchant_id, OTHER.merchant_id] {
        let mine = if conforming::all_malls_of(digest, merchant) {
            vec![]
        } else {
            ownership::merchant(json, merchant)
        };
        out.push(format!("ownership {merchant}: {:?}", said(&mine)));
    }
    let unknown = if conforming::carries_no_records(digest) {
        vec![]
    } else {
        ownership::unknown_merchant(json)
    };
    out.push(format!("unknown merchant: {:?}", said(&unknown)));
    let order = match conforming::spu_ids(digest) {
        Some(ids) => products::order_of_ids(ids),
        None => products::order(json),
    };
    out.push(format!("order: {:?}", said(&order)));
    let tree_success = json.get("success") == Some(&Value::Bool(true));
    let (success, data_len, array_len) = if fast {
        (json.success_is_true(), json.data_len(), json.array_len())
    } else {
        (
            tree_success,
            json.get("data").and_then(Value::as_array).map(Vec::len),
            json.as_array().map(Vec::len),
        )
    };
    out.push(format!(
        "success {success} data {data_len:?} array {array_len:?}"
    ));
    for status in [200, 401] {
        let refused = if fast {
            preflight::refused_json(status, json)
        } else {
            preflight::refused(status, json)
        };
        out.push(format!(
            "refused {status}: {:?}",
            said(&Vec::from_iter(refused))
        ));
    }
    out
}

/// The reference data's records, to build documents from.
struct Stock {
    malls: Vec<Value>,
    products: Vec<Value>,
}

impl Stock {
    fn new() -> Stock {
        let dataset = Dataset::new(Shape::Standard);
        let malls = dataset.malls().iter().map(data::mall_record).collect();
        let mut products = Vec::new();
        for mall in dataset.malls_of(MAIN.merchant_id).into_iter().take(3) {
            let mut mall = mall.clone();
            mall.product_count = mall.product_count.min(6);
            products.extend(data::products(&mall));
        }
        Stock { malls, products }
    }
}

/// A fresh answer: a mall page, an error envelope or a products array.
fn base(rng: &mut Rng, stock: &Stock) -> Value {
    match rng.below(5) {
        0 | 1 => {
            let n = rng.below(4);
            let data: Vec<Value> = (0..n).map(|_| rng.pick(&stock.malls).clone()).collect();
            json!({"success": true, "code": "0000", "msg": "处理成功", "data": data})
        }
        2 => {
            let data = rng.pick(&[Value::Null, json!([]), json!("absent")]).clone();
            let mut v = json!({"success": false, "code": "4001", "msg": "签名错误"});
            if data != json!("absent") {
                v["data"] = data;
            }
            v
        }
        _ => {
            let n = rng.below(4);
            Value::Array((0..n).map(|_| rng.pick(&stock.products).clone()).collect())
        }
    }
}

/// Values a mutation puts in place of another.
fn odd_value(rng: &mut Rng) -> Value {
    let pool = [
        Value::Null,
        json!(true),
        json!(0),
        json!(1),
        json!(2),
        json!(3),
        json!(-1),
        json!(1.0),
        json!(1e5),
        json!(-0.0),
        json!(1.5),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(""),
        json!("12"),
        json!("abc"),
        json!("0000"),
        json!("2024-01-01 00:00:00"),
        json!("2024-13-01 00:00:00"),
        json!([]),
        json!({}),
        json!(["a"]),
        json!([1]),
        json!({"orderFailNum": 1}),
        json!("[]"),
        json!("[{\"type\":\"text\",\"text\":\"x\"}]"),
        json!("[{\"type\":\"bigImg\",\"img_list\":[1]}]"),
        json!("[{\"type\":\"video\"}]"),
        json!("{not json"),
    ];
    rng.pick(&pool).clone()
}

/// Walks to a random object or array inside `v` and changes it.
fn mutate_value(rng: &mut Rng, v: &mut Value) {
    // The path is chosen on a shared view, then followed with a mutable one.
    let mut path = Vec::new();
    let mut look: &Value = v;
    for _ in 0..rng.below(5) {
        let len = match look {
            Value::Object(map) => map.len(),
            Value::Array(items) => items.len(),
            _ => 0,
        };
        if len == 0 {
            break;
        }
        let i = rng.below(len);
        let next = match look {
            Value::Object(map) => map.values().nth(i),
            Value::Array(items) => items.get(i),
            _ => None,
        };
        match next {
            Some(n) if n.is_object() || n.is_array() => {
                path.push(i);
                look = n;
            }
            _ => break,
        }
    }
    let mut at = v;
    for i in path {
        at = match at {
            Value::Object(map) => map.values_mut().nth(i).expect("chosen above"),
            Value::Array(items) => &mut items[i],
            _ => unreachable!("the path goes through containers"),
        };
    }
    let value = odd_value(rng);
    match at {
        Value::Object(map) => {
            let len = map.len();
            match rng.below(3) {
                0 if len > 0 => {
                    let i = rng.below(len);
                    if let Some(key) = map.keys().nth(i).cloned() {
                        map.shift_remove(&key);
                    }
                }
                1 if len > 0 => {
                    let i = rng.below(len);
                    if let Some(slot) = map.values_mut().nth(i) {
                        *slot = value;
                    }
                }
                _ => {
                    map.insert("extraField".to_string(), value);
                }
            }
        }
        Value::Array(items) => match rng.below(3) {
            0 if !items.is_empty() => {
                items.pop();
            }
            1 if !items.is_empty() => items[0] = value,
            _ => items.push(value),
        },
        other => *other = value,
    }
}

/// Every record of `v` (malls of a page, products of an array) as the fault writes it.
fn apply_fault(fault: Fault, v: &mut Value) {
    let products = v.is_array();
    let records: Vec<&mut Map<String, Value>> = match v {
        Value::Array(items) => items.iter_mut().filter_map(Value::as_object_mut).collect(),
        Value::Object(map) => match map.get_mut("data") {
            Some(Value::Array(items)) => {
                items.iter_mut().filter_map(Value::as_object_mut).collect()
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    for record in records {
        if products {
            fault.mutate_product(record);
        } else {
            fault.mutate_mall(record);
        }
    }
}

/// An integer literal after a colon, and what follows it.
static INTEGER: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r":(-?[0-9]+)([,}\]])").unwrap());

/// Edits of the bytes that a `Value` cannot make: a key given twice, integers spelt `1.0`,
/// `1e0` or beyond a double, escaped keys, white space, a cut.
fn mutate_bytes(rng: &mut Rng, bytes: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8(bytes).unwrap_or_default();
    let spots =
        |pattern: &str| -> Vec<usize> { text.match_indices(pattern).map(|(i, _)| i).collect() };
    let out = match rng.below(7) {
        0 => {
            // Give the first key of an object twice.
            let opens = spots("{\"");
            if opens.is_empty() {
                return text.into_bytes();
            }
            let at = *rng.pick(&opens) + 1;
            let key_end = text[at + 1..].find('"').map_or(at + 1, |e| at + 1 + e);
            let key = &text[at..=key_end];
            let value = rng.pick(&["null", "1", "\"x\"", "[]"]);
            format!("{}{key}:{value},{}", &text[..at], &text[at..])
        }
        1 => {
            // Respell an integer literal.
            let found: Vec<_> = INTEGER.captures_iter(&text).collect();
            if found.is_empty() {
                return text.into_bytes();
            }
            let c = rng.pick(&found);
            let whole = c.get(0).unwrap();
            let digits = &c[1];
            let spelt = match rng.below(5) {
                0 => format!("{digits}.0"),
                1 => format!("{digits}e0"),
                2 => "1e999".to_string(),
                3 => "9".repeat(400),
                _ => format!("-{digits}"),
            };
            format!(
                "{}:{spelt}{}{}",
                &text[..whole.start()],
                &c[2],
                &text[whole.end()..]
            )
        }
        2 => {
            // Escape a letter of a key.
            let keys = spots("\":");
            if keys.is_empty() {
                return text.into_bytes();
            }
            let at = *rng.pick(&keys);
            match text[..at].char_indices().last() {
                Some((i, c)) if c.is_ascii_alphabetic() => {
                    format!("{}\\u{:04x}{}", &text[..i], c as u32, &text[at..])
                }
                _ => text,
            }
        }
        3 => text.replace(",\"", ", \n\t\""),
        4 => {
            let cut = rng.below(text.len());
            text.get(..cut).unwrap_or_default().to_string()
        }
        5 => {
            let fault = *rng.pick(Fault::all());
            return fault.respell(text.into_bytes());
        }
        _ => format!("{text} x"),
    };
    out.into_bytes()
}

#[test]
fn the_fast_path_gives_the_verdicts_and_findings_of_the_tree_path() {
    let schemas = SchemaSet::embedded().expect("the shipped schemas compile");
    assert!(schemas.is_shipped());
    let stock = Stock::new();
    let mut rng = Rng(24);
    let (mut fast_taken, mut tree_taken, mut not_json) = (0usize, 0usize, 0usize);
    for i in 0..DOCUMENTS {
        let mut doc = base(&mut rng, &stock);
        // Every fourth document carries a fault of the reference server, each in turn.
        let faults = Fault::all();
        let fault = (i % 4 == 0).then(|| faults[(i / 4) % faults.len()]);
        if let Some(fault) = fault {
            apply_fault(fault, &mut doc);
        }
        let edits = if fault.is_some() { 0 } else { rng.below(4) };
        for _ in 0..edits {
            mutate_value(&mut rng, &mut doc);
        }
        let mut bytes = serde_json::to_vec(&doc).unwrap();
        if let Some(fault) = fault {
            bytes = fault.respell(bytes);
        } else if rng.below(4) == 0 {
            bytes = mutate_bytes(&mut rng, bytes);
        }
        let shown = || {
            String::from_utf8_lossy(&bytes)
                .chars()
                .take(600)
                .collect::<String>()
        };
        // The reader agrees with the serde model it replaced, digest for digest.
        assert_eq!(
            crate::spec::wire::read(&bytes),
            crate::spec::wire::read_with_model(&bytes),
            "{}",
            shown()
        );
        let fast = LazyJson::parse(Bytes::from(bytes.clone()));
        let tree = LazyJson::parse_tree(Bytes::from(bytes.clone()));
        let (fast, tree) = match (fast, tree) {
            (Ok(f), Ok(t)) => (f, t),
            (Err(f), Err(t)) => {
                assert_eq!(f.to_string(), t.to_string(), "{}", shown());
                not_json += 1;
                continue;
            }
            (f, t) => panic!(
                "one path read the body, the other did not: fast {:?}, tree {:?}: {}",
                f.err(),
                t.err(),
                shown()
            ),
        };
        if fast.digest().is_none() {
            // A body in doubt took the tree path in both: the same code on the same bytes.
            assert_eq!(fast.tree(), tree.tree(), "{}", shown());
            tree_taken += 1;
            continue;
        }
        fast_taken += 1;
        // The state code of each mall (what `mall.read-only` compares between reads, which
        // may take either path) is the one the tree gives.
        if let Some(crate::spec::wire::Digest::Envelope(envelope)) = fast.digest() {
            let records = tree
                .tree()
                .and_then(|t| t.get("data"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let keys = envelope.malls.clone().unwrap_or_default();
            assert_eq!(keys.len(), records.len(), "{}", shown());
            for (key, record) in keys.iter().zip(&records) {
                let tree_code = crate::spec::wire::state_code_of(record);
                assert_eq!(Some(key.state), tree_code, "{}", shown());
                assert_eq!(
                    Some(key.state.described()),
                    tree_code.map(|c| c.described()),
                    "{}",
                    shown()
                );
            }
        }
        let name = fast.digest().map_or("", |d| d.schema());
        let a = verdicts(&schemas, &fast, name, true);
        let b = verdicts(&schemas, &tree, name, false);
        assert_eq!(a, b, "{}", shown());
    }
    crate::say::stderr_line!("fast path {fast_taken}, tree path {tree_taken}, not JSON {not_json}");
    // Both paths were taken many times (and the not-JSON answers compared their errors).
    assert!(fast_taken > DOCUMENTS / 5, "fast {fast_taken}");
    assert!(tree_taken > DOCUMENTS / 5, "tree {tree_taken}");
    assert!(not_json > 100, "not JSON {not_json}");
}
