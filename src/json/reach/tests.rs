use proptest::prelude::*;
use serde_json::{Value, json};
use serde_json_path::JsonPath;

use super::*;

fn pruned(doc: &Value, query: &str, end: &Reach) -> Value {
    let bytes = serde_json::to_vec(doc).unwrap();
    pruned_tree(&bytes, &Reach::of_query(query, end)).unwrap()
}

#[test]
fn a_member_path_keeps_only_the_members_it_names() {
    let doc = json!({"data": [{"a": 1, "b": [2, 3]}, {"b": 4}], "c": {"a": 5}, "code": "0000"});
    assert_eq!(
        pruned(&doc, "$.data[*].a", &Reach::whole()),
        json!({"data": [{"a": 1}, {}]})
    );
    assert_eq!(
        pruned(&doc, "$['code', 'c']", &Reach::whole()),
        json!({"c": {"a": 5}, "code": "0000"})
    );
}

#[test]
fn nodes_only_counted_are_kept_empty_in_their_places() {
    let doc = json!({"data": [{"a": 1}, [1, 2], "s"], "b": 1});
    assert_eq!(
        pruned(&doc, "$.data[*]", &Reach::node()),
        json!({"data": [{}, [], "s"]})
    );
}

#[test]
fn a_filter_keeps_what_its_relative_queries_look_at() {
    let doc = json!({"data": [{"a": {"x": 1, "y": 2}, "b": 2, "c": 3}]});
    assert_eq!(
        pruned(&doc, "$.data[?@.a.x == 1 && !@.b]", &Reach::node()),
        json!({"data": [{"a": {"x": 1}, "b": 2}]})
    );
    assert_eq!(
        pruned(&doc, "$.data[?@.b != null].c", &Reach::whole()),
        json!({"data": [{"b": 2, "c": 3}]})
    );
}

#[test]
fn what_is_not_modelled_reaches_the_whole_node() {
    let doc = json!({"data": [{"a": 1, "b": 2}], "c": 3});
    for query in [
        "$..a",
        "$['d\\u0061ta']",
        "$.data[?@.a == $.c]",
        "$.data[?count(@..a) > 0]",
        "not a query",
    ] {
        let reach = Reach::of_query(query, &Reach::node());
        let kept = pruned(&doc, query, &Reach::node());
        assert!(
            reach.is_whole() || kept["data"] == doc["data"],
            "{query}: {kept}"
        );
    }
    assert!(Reach::of_query("$..a", &Reach::node()).is_whole());
}

/// Every `path:` of the shipped case files, with `${VAR}` written as a value.
fn shipped_paths() -> Vec<String> {
    let files = [
        include_str!("../../../cases/mall-list.yaml"),
        include_str!("../../../cases/mall-products.yaml"),
        include_str!("../../../cases/ownership.yaml"),
        include_str!("../../../cases/paging.yaml"),
    ];
    let re = regex::Regex::new(r#"path:\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)')"#).unwrap();
    let var = regex::Regex::new(r"\$\{[A-Z_]+\}").unwrap();
    let mut out = Vec::new();
    for text in files {
        for c in re.captures_iter(text) {
            let path = match (c.get(1), c.get(2)) {
                (Some(d), _) => d.as_str().replace("\\\"", "\"").replace("\\\\", "\\"),
                (_, Some(s)) => s.as_str().replace("''", "'"),
                _ => continue,
            };
            out.push(var.replace_all(&path, "x").into_owned());
        }
    }
    out
}

/// Queries that exercise every selector and what is not modelled.
const QUERIES: &[&str] = &[
    "$",
    "$.a",
    "$.*",
    "$[*]",
    "$.*.*",
    "$.data",
    "$.data[*]",
    "$.data[*].a",
    "$.data[*].seller.x",
    "$.data[0]",
    "$.data[-1].a",
    "$.data[1:3].b",
    "$.data[::2]",
    "$.data[::-1].a",
    "$.data[0, 2].a",
    "$.data[0, 'a']",
    "$['a', 'b']",
    "$[\"data\"][0]",
    "$['é']",
    "$.é",
    "$ .data [0] .a",
    "$[ 'data' , 'a' ][ * ]",
    "$['d\\u0061ta'][*]",
    "$..a",
    "$.data..x",
    "$.data[?@.a]",
    "$.data[?!@.a]",
    "$.data[?@.a == 1]",
    "$.data[?@.a == 'x]y'].b",
    "$.data[?@.a == \"x,y\" || @.b].b",
    "$.data[?@.seller.x != null].seller.x",
    "$.data[?length(@.tags) > 1]",
    "$.data[?count(@.*) > 1].a",
    "$.data[?count(@..a) > 0]",
    "$.data[?match(@.x, 'a.*')]",
    "$.data[?search(@.a, '[x]')].b",
    "$.data[?@.a == $.b]",
    "$.data[?@.b[?@.a]]",
    "$.data[?@.tags[0] == 'x']",
    "$.data[?@[0] == 1]",
    "$.data[?@ == 1]",
    "$[?@.data]",
    "$.data[*][?@ > 1]",
    "$.data[?@.a, 0].b",
];

const KEYS: &[&str] = &["a", "b", "x", "data", "seller", "tags", "é", "d"];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..5).prop_map(Value::from),
        prop::sample::select(vec![0.5f64, -1.25, 1e300]).prop_map(Value::from),
        prop::sample::select(vec!["", "x", "a", "abc", "x]y", "x,y", "é"]).prop_map(Value::from),
    ]
}

fn any_doc() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..5).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

/// A page-like document: `data` an array of records with members of the keys above.
fn page() -> impl Strategy<Value = Value> {
    let record = prop::collection::vec((prop::sample::select(KEYS), any_doc()), 0..6)
        .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()));
    (prop::collection::vec(record, 0..5), any_doc(), any_doc())
        .prop_map(|(data, a, b)| json!({"a": a, "data": data, "b": b}))
}

/// The nodes a query selects, each with its place.
fn located(path: &JsonPath, doc: &Value) -> Vec<(String, Value)> {
    path.query_located(doc)
        .into_iter()
        .map(|n| (n.location().to_string(), n.node().clone()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    /// The differential test: every query selects, in the tree of what it reaches, the nodes
    /// it selects in the whole tree, at the same places, in the same order; whole when they
    /// are wanted whole.
    #[test]
    fn every_query_selects_in_the_pruned_tree_what_it_selects_in_the_whole(
        doc in prop_oneof![page(), any_doc()]
    ) {
        let bytes = serde_json::to_vec(&doc).unwrap();
        let whole: Value = serde_json::from_slice(&bytes).unwrap();
        let shipped = shipped_paths();
        for query in QUERIES.iter().copied().chain(shipped.iter().map(String::as_str)) {
            let path = JsonPath::parse(query).unwrap_or_else(|e| panic!("{query}: {e}"));
            let expected = located(&path, &whole);
            for end in [Reach::whole(), Reach::node()] {
                let tree = pruned_tree(&bytes, &Reach::of_query(query, &end)).unwrap();
                let got = located(&path, &tree);
                if end.is_whole() {
                    prop_assert_eq!(&got, &expected, "{} in {}", query, whole);
                } else {
                    let places = |l: &[(String, Value)]| l.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
                    prop_assert_eq!(places(&got), places(&expected), "{} in {}", query, whole);
                }
            }
        }
    }
}

#[test]
fn the_shipped_paths_are_read_and_most_of_them_prune() {
    let paths = shipped_paths();
    assert!(paths.len() >= 80, "{} paths found", paths.len());
    let pruning = paths
        .iter()
        .filter(|p| !Reach::of_query(p, &Reach::node()).is_whole())
        .count();
    assert!(
        pruning * 10 >= paths.len() * 9,
        "{pruning} of {}",
        paths.len()
    );
}
