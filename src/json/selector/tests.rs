use super::*;
use insta::_macro_support::{SerializationFormat, serialize_value};
use proptest::prelude::*;
use serde_json::json;

const PLACEHOLDER: &str = "[redacted]";

/// What insta 1.49 itself writes for `value` (its `redactions` feature is on in test builds
/// only): maps sorted, the redactions, then the sorts, as `snapshot/engine.rs` used to set them.
fn by_insta(value: &Value, redact: &[String], sort: &[String]) -> String {
    let mut settings = insta::Settings::new();
    settings.set_sort_maps(true);
    for s in redact {
        settings.add_redaction(s, PLACEHOLDER);
    }
    for s in sort {
        settings.sort_selector(s);
    }
    settings.bind(|| serialize_value(value, SerializationFormat::Json))
}

fn by_us(value: &Value, redact: &[String], sort: &[String]) -> String {
    let shaped = shape(value, &unchanged, redact, sort, PLACEHOLDER);
    insta::Settings::new().bind(|| serialize_value(&shaped, SerializationFormat::Json))
}

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a",
        "b",
        "data",
        "$key",
        "mallSn",
        "x y",
        "[redacted]",
    ])
    .prop_map(str::to_string)
}

fn document() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0u64..4).prop_map(|n| json!(n)),
        (-3i64..0).prop_map(|n| json!(n)),
        prop::sample::select(vec![0.5f64, -1.5, 2.0]).prop_map(|f| json!(f)),
        prop::sample::select(vec!["", "a", "b", "[redacted]", "z"]).prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 40, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// Selectors insta accepts (it panics on a negative index and on two `.**`).
fn selector() -> impl Strategy<Value = String> {
    let segment = prop::sample::select(vec![
        ".a",
        ".b",
        ".data",
        ".$key",
        ".*",
        "[]",
        "[0]",
        "[1]",
        "[1:3]",
        "[:-1]",
        "[-2:]",
        "[\"a\"]",
        "[\"x y\"]",
        ". *",
    ]);
    let alternative = (
        prop::collection::vec(segment, 0..4),
        any::<bool>(),
        0usize..4,
    )
        .prop_map(|(mut segments, deep, at)| {
            if deep {
                segments.insert(at.min(segments.len()), ".**");
            }
            if segments.is_empty() {
                ".".to_string()
            } else {
                segments.concat()
            }
        });
    prop::collection::vec(alternative, 1..3).prop_map(|a| a.join(", "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// The differential test: for generated documents and selectors, what mallcheck hands insta
    /// serializes to the very text insta's own redactions and sorts give.
    #[test]
    fn shaping_writes_what_insta_redactions_write(
        value in document(),
        redact in prop::collection::vec(selector(), 0..3),
        sort in prop::collection::vec(selector(), 0..2),
    ) {
        prop_assert_eq!(by_us(&value, &redact, &sort), by_insta(&value, &redact, &sort));
    }
}

#[test]
fn shipped_selectors_and_case_forms_match_insta() {
    let page = json!({
        "code": "0000", "msg": "ok", "traceId": "t-1",
        "data": [
            {"mallSn": "2", "ctime": "2024-01-01 00:00:00", "tags": ["b", "a"], "orderStatistics": {"n": 1}},
            {"mallSn": "1", "ctime": "2024-01-02 00:00:00", "tags": [], "orderStatistics": null},
        ],
    });
    // The run's default redactions (snapshot::DEFAULT_REDACTIONS) and two of a case.
    let redact: Vec<String> = [
        ".traceId",
        ".requestId",
        ".timestamp",
        ".data[].orderStatistics",
        ".data[0].ctime",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let sort = vec![".data".to_string(), ".data[].tags".to_string()];
    assert_eq!(
        by_us(&page, &redact, &sort),
        by_insta(&page, &redact, &sort)
    );
    // And it did something: the trace id and the statistics are gone, the tags sorted.
    let ours = by_us(&page, &redact, &sort);
    assert!(!ours.contains("t-1") && !ours.contains("\"n\""), "{ours}");
    assert!(ours.find("\"a\"") < ours.find("\"b\""), "{ours}");
}

#[test]
fn a_negative_index_counts_from_the_end() {
    let value = json!({"data": [1, 2, 3]});
    let shaped = shape(
        &value,
        &unchanged,
        &[".data[-1]".to_string()],
        &[],
        PLACEHOLDER,
    );
    let text = serde_json::to_string(&shaped).expect("serializes");
    assert_eq!(text, r#"{"data":[1,2,"[redacted]"]}"#);
    let past = shape(
        &value,
        &unchanged,
        &[".data[-4]".to_string()],
        &[],
        PLACEHOLDER,
    );
    assert_eq!(
        serde_json::to_string(&past).expect("serializes"),
        r#"{"data":[1,2,3]}"#
    );
}

#[test]
fn selectors_parse_as_insta_grammar_says() {
    for ok in [
        ".",
        ".data[].orderStatistics",
        ".data[0].ctime",
        ".**",
        ".data[1:3]",
        "[\"a\"].b",
        ".a, .b",
        ".a,",
        ".data[-1]",
        " .data [ ] . * ",
        ".data[:2]",
        ".data[2:]",
        ".ünïcode_1",
    ] {
        assert!(Selector::parse(ok).is_ok(), "{ok}");
    }
    for (bad, why) in [
        ("", "empty"),
        ("data", "starts with"),
        (".data[", "subscript"),
        (".data[x]", "subscript"),
        (".1a", "followed by"),
        ("[:]", "subscript"),
        (".**.a.**", "once"),
        (". .a", "followed by"),
        (".a .", "followed by"),
        ("[\"a]", "subscript"),
    ] {
        let problem = Selector::parse(bad).expect_err(bad);
        assert!(problem.contains(why), "{bad}: {problem}");
    }
}
