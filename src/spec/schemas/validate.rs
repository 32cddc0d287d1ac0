//! Validation: an instance checked against a schema (record arrays one record at a time),
//! every violation turned into a finding with an expected and an actual phrase, findings
//! capped per check and repeated ones counted.

use std::borrow::Borrow;
use std::fmt::Write as _;
use std::hash::Hasher as _;

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use mallcheck_schema_engine::CompiledSchema;
use serde_json::Value;

use super::attribute::{Attributions, Start};
use super::extra::Layouts;
use super::{INTRODUCTION_SCHEMA, Items, MAX_FINDINGS, RecordArray, Schema, SchemaSet, check_of};
use crate::json::escape_pointer;
use crate::spec::catalog::{EXTRA_FIELDS, PRODUCT_INTRODUCTION};
use crate::verdict::check::Check;
use crate::verdict::event::{Actual, Finding};
use crate::verdict::findings::Findings;

impl SchemaSet {
    /// One finding per violation of schema `name` by `instance`: at most [`MAX_FINDINGS`] of
    /// each check, then one finding per check saying how many more there were.
    ///
    /// For `products-response` and `product`, each `productIntroduction` text is also parsed
    /// and checked against `product-introduction` (§2.7). An unknown name yields no finding:
    /// callers check [`SchemaSet::has`] first (case files are validated at load time).
    pub fn validate(&self, name: &str, instance: &Value) -> Vec<Finding> {
        let mut out = Findings::new(MAX_FINDINGS);
        self.validate_into(name, instance, &mut out);
        out.into_vec()
    }

    /// [`SchemaSet::validate`] into a bounded collection: findings past its cap are counted,
    /// never built. Records of an array are validated one at a time, so memory does not grow
    /// with the number of broken records.
    pub fn validate_into(&self, name: &str, instance: &Value, out: &mut Findings) {
        let mut attributions = Attributions::default();
        self.validate_root(name, instance, &mut attributions, out);
        for intro in introductions(name, instance) {
            self.introduction_findings(&Introduction::parse(intro), &mut attributions, out);
        }
    }

    /// Schema findings of the response itself (not of the JSON inside its texts).
    pub(super) fn validate_root(
        &self,
        name: &str,
        instance: &Value,
        attributions: &mut Attributions,
        out: &mut Findings,
    ) {
        let Some(schema) = self.schemas.get(name) else {
            return;
        };
        if self.compiled(schema).validator.is_valid(instance) {
            return;
        }
        let mut pointer = String::new();
        let mut cx = Violations::new(attributions, out, Place::Response);
        self.violations(schema, &EXTRA_FIELDS, instance, &mut pointer, &mut cx);
    }

    /// [`SchemaSet::validate`] then [`SchemaSet::extra_fields`], parsing the JSON held in each
    /// `productIntroduction` once for both.
    pub fn check(&self, name: &str, instance: &Value) -> Vec<Finding> {
        let mut out = Findings::new(MAX_FINDINGS);
        self.check_into(name, instance, &mut out);
        out.into_vec()
    }

    /// [`SchemaSet::check`] into a bounded collection.
    pub fn check_into(&self, name: &str, instance: &Value, out: &mut Findings) {
        let mut attributions = Attributions::default();
        self.validate_root(name, instance, &mut attributions, out);
        self.extra_fields_root(name, instance, out);
        // One introduction at a time: each parsed tree is dropped before the next is built.
        let layouts = &mut Layouts::default();
        for (pointer, text) in introductions(name, instance) {
            let intro = Introduction::parse((pointer, text));
            self.introduction_findings(&intro, &mut attributions, out);
            self.extra_intro_findings(&intro, layouts, out);
        }
    }

    /// Every violation of `schema` by `instance` into `cx`. A schema split at its record
    /// arrays is checked without them first, then one record at a time; `default` is the
    /// check in force where the schema was entered. `pointer` is the instance location so far
    /// (a reused buffer).
    fn violations(
        &self,
        schema: &Schema,
        default: &'static Check,
        instance: &Value,
        pointer: &mut String,
        cx: &mut Violations<'_>,
    ) {
        let start = Start {
            uri: &schema.uri,
            node: &schema.document,
            check: check_of(&schema.document).unwrap_or(default),
        };
        let compiled = self.compiled(schema);
        let Some(split) = &compiled.split else {
            self.errors(&compiled.validator, start, instance, pointer, cx);
            return;
        };
        self.errors(&split.shallow, start, instance, pointer, cx);
        for array in &split.arrays {
            let Some(records) = array.locate(instance) else {
                continue;
            };
            let len = pointer.len();
            for key in &array.path {
                pointer.push('/');
                pointer.push_str(&escape_pointer(key));
            }
            let base = pointer.len();
            let mut repeats = Repeats::default();
            for (i, record) in records.iter().enumerate() {
                pointer.truncate(base);
                self.record_violations(
                    schema,
                    array,
                    start,
                    (i, record),
                    pointer,
                    &mut repeats,
                    cx,
                );
            }
            pointer.truncate(len);
        }
    }

    /// Whether one record of a record array of `schema` breaks no rule (the check a tree
    /// makes once for the whole body before looking at any record).
    pub(super) fn record_is_valid(&self, array: &RecordArray, record: &Value) -> bool {
        match &array.items {
            Items::Document(name) => self
                .schemas
                .get(name)
                .is_none_or(|target| self.compiled(target).validator.is_valid(record)),
            Items::Inline { validator, .. } => validator.is_valid(record),
        }
    }

    /// The violations of record `i` of a record array of `schema` (entered at `start`), the
    /// record located by `pointer` up to the array; `repeats` remembers records already
    /// validated (by reference when the whole body is a tree, owned when it is streamed).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_violations<R: Borrow<Value>>(
        &self,
        schema: &Schema,
        array: &RecordArray,
        start: Start<'_>,
        (i, record): (usize, R),
        pointer: &mut String,
        repeats: &mut Repeats<R>,
        cx: &mut Violations<'_>,
    ) {
        let array_check = array.array_check.unwrap_or(start.check);
        let items_check = array.items_check.unwrap_or(array_check);
        let value = record.borrow();
        let fingerprint = fingerprint(value);
        if repeats.replay(fingerprint, value, cx) {
            return;
        }
        let before = cx.counts.clone();
        let base = pointer.len();
        let _ = write!(pointer, "/{i}");
        match &array.items {
            Items::Document(name) => {
                if let Some(target) = self.schemas.get(name)
                    && !self.compiled(target).validator.is_valid(value)
                {
                    self.violations(target, items_check, value, pointer, cx);
                }
            }
            Items::Inline { validator, wrapper } => {
                let start = Start {
                    uri: &schema.uri,
                    node: wrapper,
                    check: array_check,
                };
                self.errors(validator, start, value, pointer, cx);
            }
        }
        pointer.truncate(base);
        repeats.remember(fingerprint, record, &before, &cx.counts);
    }

    /// The errors of one validator on one value, each attributed to its check and handed to
    /// `cx` (which builds a finding only while the check is under its cap).
    pub(super) fn errors(
        &self,
        validator: &CompiledSchema,
        start: Start<'_>,
        instance: &Value,
        pointer: &str,
        cx: &mut Violations<'_>,
    ) {
        if validator.is_valid(instance) {
            return;
        }
        for error in validator.iter_errors(instance) {
            // A custom keyword's evaluation path starts inside the document that defines it,
            // so it says nothing of the field: attribute it along the instance path instead.
            let check = if let ValidationErrorKind::Custom { message, .. } = error.kind() {
                let path = error.instance_path().as_str();
                let of_object = message
                    .contains(super::load::ZERO_TIME_MARK)
                    .then(|| {
                        self.attribute_object_keyword(start, path, super::load::ZERO_TIME_KEYWORD)
                    })
                    .flatten();
                of_object.unwrap_or_else(|| self.attribute_at(start, path))
            } else {
                cx.attributions
                    .get_or(start, error.evaluation_path().as_str(), || {
                        self.attribute(start, &error)
                    })
            };
            cx.push(check, &error, pointer);
        }
    }

    /// Findings of the JSON held by one `productIntroduction` text: not JSON, or not valid
    /// against `product-introduction`.
    pub(super) fn introduction_findings(
        &self,
        intro: &Introduction<'_>,
        attributions: &mut Attributions,
        out: &mut Findings,
    ) {
        let Some(schema) = self.schemas.get(INTRODUCTION_SCHEMA) else {
            return;
        };
        let pointer = intro.pointer.as_str();
        let inner = match &intro.parsed {
            Ok(inner) => inner,
            Err(e) => {
                out.push_with(&PRODUCT_INTRODUCTION, || {
                    Finding::new(
                        &PRODUCT_INTRODUCTION,
                        pointer,
                        "a JSON array of content blocks",
                        compact(&Value::String(intro.text.to_string())),
                    )
                    .with_detail(format!("the text is not JSON: {e}"))
                });
                return;
            }
        };
        if self.compiled(schema).validator.is_valid(inner) {
            return;
        }
        let mut cx = Violations::new(attributions, out, Place::Introduction(pointer));
        self.violations(schema, &EXTRA_FIELDS, inner, &mut String::new(), &mut cx);
    }
}

/// Records of one array already validated, with the violations each produced: a record equal
/// to one of them breaks the same rules, so once those checks keep no more findings it is only
/// counted (a broken record repeated a million times is validated once). The last
/// [`Repeats::MAX`] distinct records validated are remembered.
pub(super) struct Repeats<R> {
    seen: Vec<(u64, R, CheckCounts)>,
    /// The entry replaced next once `seen` is full.
    next: usize,
}

impl<R> Default for Repeats<R> {
    fn default() -> Self {
        Repeats {
            seen: Vec::new(),
            next: 0,
        }
    }
}

impl<R: Borrow<Value>> Repeats<R> {
    const MAX: usize = 8;

    /// Counts the violations of `record` without validating it, when it repeats a remembered
    /// record whose checks are all full; false when it must be validated.
    fn replay(&self, fingerprint: u64, record: &Value, cx: &mut Violations<'_>) -> bool {
        let Some((_, _, counts)) = self
            .seen
            .iter()
            .find(|(f, seen, _)| *f == fingerprint && seen.borrow() == record)
        else {
            return false;
        };
        if counts.iter().any(|(check, _)| cx.out.wants(check)) {
            return false;
        }
        for &(check, n) in counts {
            cx.omit(check, n);
        }
        true
    }

    /// Remembers what `record` produced: the growth of the counts from `before` to `after`.
    fn remember(
        &mut self,
        fingerprint: u64,
        record: R,
        before: &[(&'static Check, usize)],
        after: &[(&'static Check, usize)],
    ) {
        if self
            .seen
            .iter()
            .any(|(f, seen, _)| *f == fingerprint && seen.borrow() == record.borrow())
        {
            return;
        }
        let produced = after
            .iter()
            .filter_map(|&(check, n)| {
                let was = before
                    .iter()
                    .find(|(c, _)| std::ptr::eq(*c, check))
                    .map_or(0, |(_, n)| *n);
                (n > was).then_some((check, n - was))
            })
            .collect();
        let entry = (fingerprint, record, produced);
        if self.seen.len() < Self::MAX {
            self.seen.push(entry);
        } else {
            self.seen[self.next] = entry;
            self.next = (self.next + 1) % Self::MAX;
        }
    }
}

/// A hash of a JSON value's content (key order included), to find repeated records cheaply.
fn fingerprint(value: &Value) -> u64 {
    fn feed(value: &Value, h: &mut std::collections::hash_map::DefaultHasher) {
        match value {
            Value::Null => h.write_u8(0),
            Value::Bool(b) => {
                h.write_u8(1);
                h.write_u8(u8::from(*b));
            }
            Value::Number(n) => {
                h.write_u8(2);
                h.write(n.to_string().as_bytes());
            }
            Value::String(s) => {
                h.write_u8(3);
                h.write(s.as_bytes());
                h.write_u8(0xff);
            }
            Value::Array(items) => {
                h.write_u8(4);
                h.write_usize(items.len());
                items.iter().for_each(|v| feed(v, h));
            }
            Value::Object(map) => {
                h.write_u8(5);
                h.write_usize(map.len());
                for (k, v) in map {
                    h.write(k.as_bytes());
                    h.write_u8(0xff);
                    feed(v, h);
                }
            }
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    feed(value, &mut h);
    h.finish()
}

/// Where the validated value sits: the response itself, or the JSON inside the
/// `productIntroduction` text at this pointer of the response.
#[derive(Clone, Copy)]
pub(super) enum Place<'p> {
    Response,
    Introduction(&'p str),
}

/// A number per check.
type CheckCounts = Vec<(&'static Check, usize)>;

/// Where violations go while one value is validated.
pub(super) struct Violations<'a> {
    attributions: &'a mut Attributions,
    out: &'a mut Findings,
    place: Place<'a>,
    /// Violations so far per check (kept or not), to learn what one record produced.
    pub(super) counts: CheckCounts,
}

impl<'a> Violations<'a> {
    pub(super) fn new(
        attributions: &'a mut Attributions,
        out: &'a mut Findings,
        place: Place<'a>,
    ) -> Self {
        Violations {
            attributions,
            out,
            place,
            counts: Vec::new(),
        }
    }

    fn count(&mut self, check: &'static Check, n: usize) {
        match self
            .counts
            .iter_mut()
            .find(|(c, _)| std::ptr::eq(*c, check))
        {
            Some((_, total)) => *total += n,
            None => self.counts.push((check, n)),
        }
    }

    /// Counts `n` violations of `check` that are not kept.
    fn omit(&mut self, check: &'static Check, n: usize) {
        self.count(check, n);
        self.out.omit(check, n);
    }

    /// Adds the finding of `error` under `check`; `prefix` locates the validated value.
    fn push(&mut self, check: &'static Check, error: &ValidationError<'_>, prefix: &str) {
        self.count(check, 1);
        let place = self.place;
        self.out.push_with(check, || {
            let (expected, actual) = describe(error);
            let at = format!("{prefix}{}", error.instance_path().as_str());
            match place {
                Place::Response => Finding::new(check, at, expected, actual),
                Place::Introduction(pointer) => {
                    let at = if at.is_empty() {
                        "the root".to_string()
                    } else {
                        at
                    };
                    Finding::new(check, pointer, format!("{expected} at inner {at}"), actual)
                        .with_detail(format!(
                            "inner JSON pointer {at} inside the productIntroduction text"
                        ))
                }
            }
        });
    }
}

/// The `(pointer, text)` of each string `productIntroduction` of a product or products list.
/// One `productIntroduction` text of a response, parsed once.
pub(super) struct Introduction<'a> {
    pub(super) pointer: String,
    pub(super) text: &'a str,
    pub(super) parsed: Result<Value, serde_json::Error>,
}

impl<'a> Introduction<'a> {
    pub(super) fn parse((pointer, text): (String, &'a str)) -> Self {
        Introduction {
            pointer,
            text,
            parsed: serde_json::from_str(text),
        }
    }
}

pub(super) fn introductions<'a>(name: &str, instance: &'a Value) -> Vec<(String, &'a str)> {
    let intro = |product: &'a Value| product.get("productIntroduction").and_then(Value::as_str);
    match name {
        "product" => intro(instance)
            .map(|t| vec![("/productIntroduction".to_string(), t)])
            .unwrap_or_default(),
        "products-response" => instance
            .as_array()
            .map(|products| {
                products
                    .iter()
                    .enumerate()
                    .filter_map(|(i, p)| intro(p).map(|t| (format!("/{i}/productIntroduction"), t)))
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The expected phrase and the actual value of a violation.
pub(super) fn describe(error: &ValidationError<'_>) -> (String, Actual) {
    let actual = || Actual::json(error.instance());
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let field = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            (format!("required field `{field}`"), "missing".into())
        }
        ValidationErrorKind::Enum { options } => (format!("one of {}", list(options)), actual()),
        ValidationErrorKind::Constant { expected_value } => {
            (format!("equal to {}", compact(expected_value)), actual())
        }
        ValidationErrorKind::Type { kind } => (format!("type {}", types(kind)), actual()),
        ValidationErrorKind::Format { format } => {
            (format!("format {}", format_phrase(format)), actual())
        }
        ValidationErrorKind::Minimum { limit } => (format!("at least {limit}"), actual()),
        ValidationErrorKind::Maximum { limit } => (format!("at most {limit}"), actual()),
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            (format!("greater than {limit}"), actual())
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => (format!("less than {limit}"), actual()),
        ValidationErrorKind::MaxItems { limit } => (format!("at most {limit} items"), actual()),
        ValidationErrorKind::MinItems { limit } => (format!("at least {limit} items"), actual()),
        ValidationErrorKind::MaxLength { limit } => {
            (format!("at most {limit} characters"), actual())
        }
        ValidationErrorKind::MinLength { limit } => {
            (format!("at least {limit} characters"), actual())
        }
        ValidationErrorKind::Pattern { pattern } => (format!("matching {pattern}"), actual()),
        ValidationErrorKind::Custom { message, .. } => (message.clone(), actual()),
        ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. } => {
            ("one of the allowed shapes".to_string(), actual())
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            ("exactly one of the allowed shapes".to_string(), actual())
        }
        _ => (error.to_string(), actual()),
    }
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| value.to_string())
}

/// `[0, 1, 2]` for an enum's options.
fn list(options: &Value) -> String {
    match options.as_array() {
        Some(items) => {
            let parts: Vec<String> = items.iter().map(compact).collect();
            format!("[{}]", parts.join(", "))
        }
        None => compact(options),
    }
}

fn types(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => t.to_string(),
        TypeKind::Multiple(set) => {
            let (null, mut names): (Vec<String>, Vec<String>) =
                set.iter().map(|t| t.to_string()).partition(|t| t == "null");
            names.extend(null);
            names.join(" or ")
        }
    }
}

fn format_phrase(format: &str) -> String {
    match format {
        "datetime" => "datetime YYYY-MM-DD HH:MM:SS".to_string(),
        "digit-string" => "digit-string (non-empty ASCII digits)".to_string(),
        "decimal-text" => "decimal-text (e.g. 12 or 3.50)".to_string(),
        other => other.to_string(),
    }
}
