//! Attribution: a violation is blamed on the nearest `x-check` annotation on its path through
//! the schemas, following `$ref` and the other applicators.

use std::collections::{HashMap, HashSet};

use jsonschema::ValidationError;
use serde_json::Value;
use url::Url;

use super::{SchemaSet, check_of, child, percent_decode};
use crate::json::pointer_segments;
use crate::verdict::check::Check;

impl SchemaSet {
    /// Follows the error's evaluation path from `start` through the documents (and their
    /// `$ref`s) and returns the last `x-check` met before the failing keyword.
    pub(super) fn attribute(
        &self,
        start: Start<'_>,
        error: &ValidationError<'_>,
    ) -> &'static Check {
        let mut best = start.check;
        let mut uri = start.uri.clone();
        let mut node = start.node;
        let path = error.evaluation_path().as_str();
        let segments: Vec<String> = pointer_segments(path).collect();
        let Some((_keyword, parents)) = segments.split_last() else {
            return best;
        };
        for segment in parents {
            let next = if segment == "$ref" || segment == "$dynamicRef" {
                node.get(segment)
                    .and_then(Value::as_str)
                    .and_then(|r| self.resolve(&uri, r))
            } else {
                child(node, segment).map(|n| (uri.clone(), n))
            };
            let Some((next_uri, next_node)) = next else {
                break;
            };
            uri = next_uri;
            node = next_node;
            if let Some(check) = check_of(node) {
                best = check;
            }
        }
        best
    }

    /// The last `x-check` met walking the schema along an instance pointer: for errors of
    /// keywords whose schema path does not show the `$ref`s that led to them (custom keywords).
    pub(super) fn attribute_at(&self, start: Start<'_>, instance_path: &str) -> &'static Check {
        let mut best = start.check;
        let mut at = Some((start.uri.clone(), start.node));
        for segment in pointer_segments(instance_path) {
            let Some((uri, node)) = at else {
                break;
            };
            at = self.descend(&uri, node, &segment, &mut best, 0);
        }
        if let Some((uri, node)) = at {
            self.follow_refs(uri, node, &mut best);
        }
        best
    }

    /// The `x-check` of the `allOf` branch holding `keyword` in the schema of the object at
    /// `instance_path`: a custom keyword of an object (`x-zero-time`) fails at the object's
    /// own pointer, which names its record's check, not the rule's.
    pub(super) fn attribute_object_keyword(
        &self,
        start: Start<'_>,
        instance_path: &str,
        keyword: &str,
    ) -> Option<&'static Check> {
        let mut best = start.check;
        let mut at = Some((start.uri.clone(), start.node));
        for segment in pointer_segments(instance_path) {
            let (uri, node) = at?;
            at = self.descend(&uri, node, &segment, &mut best, 0);
        }
        let (uri, node) = at?;
        let (_, node) = self.follow_refs(uri, node, &mut best);
        node.get("allOf")?
            .as_array()?
            .iter()
            .find(|branch| branch.get(keyword).is_some())
            .and_then(check_of)
    }

    /// Follows the `$ref`s of `node`, noting every `x-check` met.
    fn follow_refs<'s>(
        &'s self,
        mut uri: Url,
        mut node: &'s Value,
        best: &mut &'static Check,
    ) -> (Url, &'s Value) {
        for _ in 0..16 {
            if let Some(check) = check_of(node) {
                *best = check;
            }
            let Some((next_uri, next)) = node
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| self.resolve(&uri, r))
            else {
                break;
            };
            uri = next_uri;
            node = next;
        }
        (uri, node)
    }

    /// The subschema of `node` (after its `$ref`s) that applies to the member or item `segment`,
    /// looking into `allOf`/`anyOf`/`oneOf`/`then`/`else` branches.
    fn descend<'s>(
        &'s self,
        uri: &Url,
        node: &'s Value,
        segment: &str,
        best: &mut &'static Check,
        depth: usize,
    ) -> Option<(Url, &'s Value)> {
        if depth > 8 {
            return None;
        }
        let mut found = *best;
        let (uri, node) = self.follow_refs(uri.clone(), node, &mut found);
        let direct = node
            .get("properties")
            .and_then(|p| p.get(segment))
            .or_else(|| segment.parse::<usize>().ok().and(node.get("items")));
        if let Some(next) = direct {
            *best = check_of(next).unwrap_or(found);
            return Some((uri, next));
        }
        let branches = ["allOf", "anyOf", "oneOf"]
            .iter()
            .filter_map(|k| node.get(*k).and_then(Value::as_array))
            .flatten()
            .chain(["then", "else"].iter().filter_map(|k| node.get(*k)));
        for branch in branches {
            let mut inner = found;
            if let Some(hit) = self.descend(&uri, branch, segment, &mut inner, depth + 1) {
                *best = inner;
                return Some(hit);
            }
        }
        None
    }

    /// Resolves `reference` against `base` to a loaded document and the node it points at.
    pub(super) fn resolve(&self, base: &Url, reference: &str) -> Option<(Url, &Value)> {
        let mut target = base.join(reference).ok()?;
        let fragment = percent_decode(target.fragment().unwrap_or(""));
        target.set_fragment(None);
        let name = self.names_by_uri.get(target.as_str())?;
        let document = &self.schemas.get(name)?.document;
        let node = if fragment.is_empty() {
            document
        } else {
            document.pointer(&fragment)?
        };
        Some((target, node))
    }

    /// Every schema node that applies alongside `nodes`: through `$ref`, `allOf`, `anyOf`,
    /// `oneOf`, `then` and `else` (each node once, so reference cycles end).
    pub(super) fn facets<'a>(&'a self, nodes: &[(Url, &'a Value)]) -> Vec<(Url, &'a Value)> {
        let mut seen: HashSet<*const Value> = HashSet::new();
        let mut stack: Vec<(Url, &'a Value)> = nodes.to_vec();
        let mut facets = Vec::new();
        while let Some((uri, node)) = stack.pop() {
            if !node.is_object() || !seen.insert(node as *const Value) {
                continue;
            }
            if let Some(target) = node
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| self.resolve(&uri, r))
            {
                stack.push(target);
            }
            for key in ["allOf", "anyOf", "oneOf"] {
                if let Some(list) = node.get(key).and_then(Value::as_array) {
                    stack.extend(list.iter().map(|s| (uri.clone(), s)));
                }
            }
            for key in ["then", "else"] {
                if let Some(sub) = node.get(key) {
                    stack.push((uri.clone(), sub));
                }
            }
            facets.push((uri, node));
        }
        facets
    }
}

/// Where attributing an error starts: the schema node the validator was built from and the
/// check in force there.
#[derive(Clone, Copy)]
pub(super) struct Start<'s> {
    pub(super) uri: &'s Url,
    pub(super) node: &'s Value,
    pub(super) check: &'static Check,
}

/// Checks already attributed during one validation, by start and evaluation path: a million
/// records breaking the same rule are attributed once.
#[derive(Default)]
pub(super) struct Attributions {
    pub(super) by_start: HashMap<(usize, usize), HashMap<String, &'static Check>>,
    /// The last attribution: errors of one keyword come in a row.
    pub(super) last: Option<((usize, usize), String, &'static Check)>,
}

impl Attributions {
    pub(super) fn get_or(
        &mut self,
        start: Start<'_>,
        path: &str,
        attribute: impl FnOnce() -> &'static Check,
    ) -> &'static Check {
        let key = (
            std::ptr::from_ref(start.node) as usize,
            std::ptr::from_ref(start.check) as usize,
        );
        if let Some((k, p, check)) = &self.last
            && *k == key
            && p == path
        {
            return check;
        }
        let paths = self.by_start.entry(key).or_default();
        let check = match paths.get(path) {
            Some(check) => *check,
            None => {
                let check = attribute();
                paths.insert(path.to_string(), check);
                check
            }
        };
        self.last = Some((key, path.to_string(), check));
        check
    }
}
