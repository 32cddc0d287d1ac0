//! Ad hoc JSONPath assertions written in case files (`case.assert`).

use serde_json::Value;

use crate::json::json_type;

use crate::case::model::{AssertOp, Assertion};
use crate::spec::catalog;
use crate::verdict::event::Finding;

fn has_type(v: &Value, wanted: &str) -> bool {
    let actual = json_type(v);
    actual == wanted || (wanted == "number" && actual == "integer")
}

/// Evaluates one assertion against a response body. `matches`, `one-of` and `type` speak of
/// every selected node, so they hold when nothing is selected (an empty mall list is valid);
/// `exists` and `count` are the way to demand nodes.
pub fn evaluate(assertion: &Assertion, body: &Value) -> Vec<Finding> {
    // The nodes alone (a reference each): their locations are found for the one a finding
    // names, so a path selecting millions of nodes costs no path per node.
    let nodes = assertion.path.query(body).all();
    let path = &assertion.path_text;
    let fail = |pointer: String, expected: String, actual: String| {
        vec![
            Finding::new(&catalog::CASE_ASSERT, pointer, expected, actual)
                .with_detail(format!("assertion on {path}")),
        ]
    };
    let pointer_of = |i: usize| crate::json::pointer_to(body, nodes[i]).unwrap_or_default();
    match &assertion.op {
        AssertOp::Count(n) => {
            if nodes.len() != *n {
                return fail(
                    String::new(),
                    format!("{n} node(s) at {path}"),
                    nodes.len().to_string(),
                );
            }
        }
        AssertOp::Exists(want) => {
            if nodes.is_empty() == *want {
                let expected = if *want {
                    "at least one node"
                } else {
                    "no node"
                };
                let (pointer, actual) = match nodes.first() {
                    Some(n) => (
                        pointer_of(0),
                        format!("{} node(s), first {}", nodes.len(), n),
                    ),
                    None => (String::new(), "no node".to_string()),
                };
                return fail(pointer, format!("{expected} at {path}"), actual);
            }
        }
        AssertOp::Equals(value) => {
            if nodes.len() != 1 {
                return fail(
                    String::new(),
                    format!("exactly one node at {path} equal to {value}"),
                    format!("{} node(s)", nodes.len()),
                );
            }
            if !same_value(nodes[0], value) {
                return fail(pointer_of(0), value.to_string(), nodes[0].to_string());
            }
        }
        AssertOp::Matches(re) => {
            for (i, n) in nodes.iter().enumerate() {
                if !n.as_str().is_some_and(|s| re.is_match(s)) {
                    return fail(
                        pointer_of(i),
                        format!("a string matching /{re}/"),
                        n.to_string(),
                    );
                }
            }
        }
        AssertOp::OneOf(values) => {
            for (i, n) in nodes.iter().enumerate() {
                if !values.iter().any(|v| same_value(n, v)) {
                    let list: Vec<String> = values.iter().map(Value::to_string).collect();
                    return fail(
                        pointer_of(i),
                        format!("one of [{}]", list.join(", ")),
                        n.to_string(),
                    );
                }
            }
        }
        AssertOp::Type(t) => {
            for (i, n) in nodes.iter().enumerate() {
                if !has_type(n, t) {
                    return fail(
                        pointer_of(i),
                        format!("type {t}"),
                        format!("{} {}", json_type(n), n),
                    );
                }
            }
        }
    }
    vec![]
}

/// JSON equality, numbers compared by value: `-0` (which serde_json reads as a float) is `0`,
/// and a whole number written `1.0` is `1` (the integer-literal rule is the schema's business,
/// not a case assertion's).
fn same_value(node: &Value, want: &Value) -> bool {
    match (node, want) {
        (Value::Number(a), Value::Number(b)) => match (a.as_i128(), b.as_i128()) {
            (Some(a), Some(b)) => a == b,
            _ => a.as_f64().is_some_and(|a| b.as_f64() == Some(a)),
        },
        _ => node == want,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json_path::JsonPath;

    fn a(path: &str, op: AssertOp) -> Assertion {
        Assertion {
            path_text: path.into(),
            path: JsonPath::parse(path).unwrap(),
            op,
            span: 0..0,
        }
    }

    #[test]
    fn one_of_reports_the_first_offender_with_its_pointer() {
        let body = json!({"data": [{"state": 1}, {"state": 3}]});
        let f = evaluate(
            &a(
                "$.data[*].state",
                AssertOp::OneOf(vec![json!(0), json!(1), json!(2)]),
            ),
            &body,
        );
        assert_eq!(f[0].pointer, "/data/1/state");
    }

    #[test]
    fn numbers_compare_by_value() {
        let body: Value =
            serde_json::from_str(r#"{"data": [{"state": -0}, {"state": 2.0}]}"#).expect("JSON");
        let one_of = AssertOp::OneOf(vec![json!(0), json!(1), json!(2)]);
        assert!(evaluate(&a("$.data[*].state", one_of), &body).is_empty());
        assert!(evaluate(&a("$.data[0].state", AssertOp::Equals(json!(0))), &body).is_empty());
        let f = evaluate(&a("$.data[1].state", AssertOp::Equals(json!(1))), &body);
        assert_eq!(f[0].pointer, "/data/1/state");
        assert!(evaluate(&a("$.data[1].state", AssertOp::Equals(json!("2"))), &body).len() == 1);
    }

    #[test]
    fn count_equals_type_and_exists() {
        let body = json!({"code": "0000", "data": [1, 2]});
        assert!(evaluate(&a("$.data[*]", AssertOp::Count(2)), &body).is_empty());
        assert_eq!(
            evaluate(&a("$.data[*]", AssertOp::Count(3)), &body).len(),
            1
        );
        assert!(evaluate(&a("$.code", AssertOp::Equals(json!("0000"))), &body).is_empty());
        assert_eq!(
            evaluate(&a("$.code", AssertOp::Equals(json!("0001"))), &body).len(),
            1
        );
        assert!(evaluate(&a("$.data[*]", AssertOp::Type("number".into())), &body).is_empty());
        assert_eq!(
            evaluate(&a("$.nope", AssertOp::Exists(true)), &body).len(),
            1
        );
        assert!(evaluate(&a("$.nope[*]", AssertOp::Type("string".into())), &body).is_empty());
    }
}
