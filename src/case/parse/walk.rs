//! Lowering of the walk, products-sweep and cross-merchant-cursor kinds: page sizes, cursor
//! rules, samples.

use super::lower::{Lower, head};
use super::{CROSS_CURSOR_KEYS, CURSOR_KEYS, SWEEP_KEYS, WALK_KEYS};
use crate::case::model::{CrossCursorCase, CursorRule, SweepCase, WalkCase, limits};
use crate::case::node::{Node, NodeKind};

impl Lower<'_> {
    pub(super) fn walk(&mut self, node: &Node) -> Option<WalkCase> {
        let fields = self.fields(node, "`walk`", WALK_KEYS)?;
        let body = self
            .require(&fields, "body", node, "`walk`")
            .and_then(|b| self.object(b, "`walk.body`"));
        let sizes = self
            .require(&fields, "sizes", node, "`walk`")
            .and_then(|s| self.sizes(s));
        let repeat = self.bool(fields.get("repeat"), "`walk.repeat`");
        let ownership = self.bool(fields.get("ownership"), "`walk.ownership`");
        let max_pages = match fields.get("max-pages") {
            None => Some(None),
            Some(m) => self
                .bounded(m, "`walk.max-pages`", limits::MAX_WALK_PAGES)
                .map(Some),
        };
        let cursor = match fields.get("cursor") {
            None => Some(CursorRule::default()),
            Some(c) => self.cursor(c),
        };
        Some(WalkCase {
            body: body?,
            sizes: sizes?,
            repeat: repeat?,
            cursor: cursor?,
            max_pages: max_pages?,
            ownership: ownership?,
        })
    }

    pub(super) fn sizes(&mut self, node: &Node) -> Option<Vec<u64>> {
        let NodeKind::Seq(items) = &node.kind else {
            self.type_error(node, "`walk.sizes`", "a sequence of page sizes");
            return None;
        };
        if items.is_empty() {
            self.error_help(
                node.span.clone(),
                "`walk.sizes` is empty: nothing would be walked",
                "e.g. `sizes: [1, 3, 10]`",
            );
            return None;
        }
        if !self.fits(items, limits::MAX_WALK_SIZES, "`walk.sizes`") {
            return None;
        }
        let sizes: Vec<Option<u64>> = items
            .iter()
            .map(|i| self.bounded(i, "a page size", limits::MAX_PAGE_SIZE))
            .collect();
        sizes.into_iter().collect()
    }

    pub(super) fn cursor(&mut self, node: &Node) -> Option<CursorRule> {
        let fields = self.fields(node, "`walk.cursor`", CURSOR_KEYS)?;
        match (fields.get("last-record"), fields.get("response")) {
            (Some(p), None) => self
                .pointer(p, "`cursor.last-record`")
                .map(CursorRule::LastRecord),
            (None, Some(p)) => self
                .pointer(p, "`cursor.response`")
                .map(CursorRule::Response),
            (Some(_), Some(_)) => {
                let at = fields
                    .key("response")
                    .map_or_else(|| head(node), |k| k.span.clone());
                self.error(
                    at,
                    "`cursor` takes one of `last-record` and `response`, not both",
                );
                None
            }
            (None, None) => {
                self.error_help(
                    head(node),
                    "`cursor` needs `last-record` or `response`",
                    "e.g. `cursor: { last-record: /mallSn }` or `cursor: { response: /nextCursor }`",
                );
                None
            }
        }
    }

    pub(super) fn cross_cursor(&mut self, node: &Node) -> Option<CrossCursorCase> {
        let what = "`cross-merchant-cursor`";
        let fields = self.fields(node, what, CROSS_CURSOR_KEYS)?;
        let body = self
            .require(&fields, "body", node, what)
            .and_then(|b| self.object(b, "`cross-merchant-cursor.body`"));
        let other_seller = self
            .require(&fields, "other-seller", node, what)
            .and_then(|s| self.object(s, "`other-seller`"));
        let cursor = match fields.get("cursor") {
            None => Some(CursorRule::default()),
            Some(c) => self.cursor(c),
        };
        Some(CrossCursorCase {
            body: body?,
            other_seller: other_seller?.value,
            cursor: cursor?,
        })
    }

    pub(super) fn sweep(&mut self, node: &Node) -> Option<SweepCase> {
        let fields = self.fields(node, "`products-sweep`", SWEEP_KEYS)?;
        let list_body = self
            .require(&fields, "list-body", node, "`products-sweep`")
            .and_then(|b| self.object(b, "`list-body`"));
        let seller = self
            .require(&fields, "seller", node, "`products-sweep`")
            .and_then(|s| self.object(s, "`seller`"));
        let other_seller = match fields.get("other-seller") {
            None => Some(None),
            Some(o) => self.object(o, "`other-seller`").map(|v| Some(v.value)),
        };
        let sample = match fields.get("sample") {
            None => Some(None),
            Some(s) => self
                .bounded(s, "`sample`", limits::MAX_SAMPLE)
                .and_then(|n| usize::try_from(n).ok())
                .map(Some),
        };
        let order = self.bool(fields.get("order"), "`order`");
        let tamper_signature = self.bool(fields.get("tamper-signature"), "`tamper-signature`");
        Some(SweepCase {
            list_body: list_body?,
            seller: seller?.value,
            other_seller: other_seller?,
            sample: sample?,
            order: order?,
            tamper_signature: tamper_signature?,
        })
    }
}
