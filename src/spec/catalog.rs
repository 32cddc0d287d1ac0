//! The single list of checks mallcheck runs: id, spec section, severity and summary.
//!
//! Code refers to a check through the constants below, never through a string literal, and
//! `mallcheck checks` prints [`CATALOG`]. Schema files name their rules with an `x-check`
//! annotation whose value must be one of these ids (a test enforces it).

use crate::verdict::check::{Check, Family, Severity};

macro_rules! checks {
    ($( $(#[$doc:meta])* $name:ident = ($id:literal, $section:literal, $sev:ident, $fam:ident, $summary:literal); )*) => {
        $( $(#[$doc])* pub static $name: Check = Check {
            id: $id, section: $section, severity: Severity::$sev, family: Family::$fam, summary: $summary,
        }; )*
        /// Every check, in the order `mallcheck checks` prints them.
        pub static CATALOG: &[&Check] = &[ $( &$name ),* ];
    };
}

checks! {
    // Transport and body decoding: a broken service, never a flaky pass.
    TRANSPORT_CONNECT = ("transport.connect", "§4", Contract, Transport, "the service accepts a connection and answers (refused, reset and DNS errors fail)");
    TRANSPORT_DROPPED = ("transport.dropped", "§4", Contract, Transport, "a signed request is answered: a connection the service accepted and then closed or reset before any answer, again on a fresh connection, while it answers other requests of the run, fails (the service failed on that request; a service never reached is transport.connect, could not test)");
    TRANSPORT_TIMEOUT = ("transport.timeout", "§4", Contract, Transport, "a response arrives completely within --timeout (connect, first byte and whole body)");
    TRANSPORT_REDIRECT = ("transport.redirect", "§4", Contract, Transport, "a JSON operation answers directly; a redirect is followed only with --follow-redirects and within the origin (scheme, host, port), and one to another origin is always a finding");
    TRANSPORT_BODY_SIZE = ("transport.body-size", "§8", Contract, Transport, "the response body fits in --max-body");
    TRANSPORT_RATE_LIMITED = ("transport.rate-limited", "§8", Contract, Transport, "the service does not turn requests away (429, or 503 with Retry-After) for longer than --max-retry-wait: an error of the run, not of the contract");
    RESPONSE_JSON = ("response.json", "§4", Contract, Transport, "the response body is well-formed UTF-8 JSON within the nesting limit");
    RESPONSE_DUPLICATE_KEY = ("response.duplicate-key", "§4", Contract, Contract, "no object of a response names a member twice (RFC 8259 §4: names SHOULD be unique): readers differ on which value counts, so a duplicate can hide a foreign merchantId or an empty data list");
    RESPONSE_NUMBER_RANGE = ("response.number-range", "§2", Contract, Contract, "every number of a response is one the spec's types (Byte, Integer, Long) can carry: none beyond a double's range, such as 1e999 or ten thousand digits");
    RESPONSE_TREE_SIZE = ("response.tree-size", "§8", Contract, Transport, "a response body can be checked within mallcheck's memory bound: a check that needs its whole tree gets it within 3 × --max-body + 16 MiB (so that a response holds about 4 × --max-body) (records are read one at a time and need none; a body of millions of keys or deep values outside a record array is checked only up to that bound, the rest skipped): an error of the run, not of the contract");
    RESPONSE_CONTENT_TYPE = ("response.content-type", "§4", Observed, Contract, "a JSON body is labelled Content-Type: application/json");
    HTTP_SERVER_ERROR = ("http.server-error", "§7", Contract, Contract, "a well-formed request is never answered with a 5xx status");
    HARNESS_SIGNER = ("harness.signer", "§5", Contract, Harness, "the configured signer gives a signature (the sign command exits 0 within --timeout and prints one): an error of the run, not of the contract");
    HARNESS_INTERNAL = ("harness.internal", "-", Contract, Harness, "mallcheck itself failed on this case (a bug: please report it with the case)");
    HARNESS_SNAPSHOT = ("harness.snapshot", "-", Contract, Harness, "mallcheck can read and write the snapshot files of a case (a local problem such as a file in place of the snapshot directory): an error of the run, not of the contract");
    HARNESS_CURSOR_RULE = ("harness.cursor-rule", "§4.1", Contract, Harness, "a cursor rule other than the default (`--cursor`, `MALLCHECK_CURSOR`, a profile's or a case's `cursor`) finds a cursor on the first full page of a walk: one that finds none there is taken for a wrong rule, an error of the run, not of the contract (the spec does not show how the cursor is returned)");
    HARNESS_UNCHECKED = ("harness.unchecked", "§8", Contract, Harness, "every check a case asks for is run: one that needs a response's whole tree (the case's assertions) is not run on a body whose tree would break mallcheck's memory bound (3 × --max-body + 16 MiB), and the case says so instead of passing: an error of the run, not of the contract (§8 states no size limit)");
    HARNESS_COVERAGE = ("harness.coverage", "§1", Contract, Harness, "the run tested what it exists for: a signed request served, and mall and product records of the configured merchant checked (a merchant without malls or products only with --allow-empty-merchant); a run that covered nothing could not test, it does not pass");
    HARNESS_INTERRUPTED = ("harness.interrupted", "-", Contract, Harness, "the run reached its end: a run stopped by a signal (SIGINT, SIGTERM, SIGHUP), or killed, before its end does not pass, and its reports say INTERRUPTED and list the cases not run");
    PREFLIGHT = ("preflight.signed-request", "§5", Contract, Transport, "before the suite, a signed first mall-list page of the configured merchant is answered and not refused (else the run stops, naming the likely causes)");
    HTTP_STATUS = ("http.status", "§7", Contract, Contract, "the HTTP status is the case's expected status: a code, or a class such as `2xx` (the shipped cases ask for any success: the spec shows no status, §7.3)");

    // Robustness: what a service does with an odd or generated request (NaN, 1e999, a lone
    // surrogate, deep nesting). The spec has no rule on it (§7 shows no status), so these cite
    // no section; they fail the run unless --robustness warn.
    ROBUSTNESS_SERVER_ERROR = ("robustness.server-error", "-", Contract, Robustness, "an odd or generated request is refused, not answered with a 5xx status or a dropped connection");
    ROBUSTNESS_HANG = ("robustness.hang", "-", Contract, Robustness, "an odd or generated request is answered within --timeout, not left hanging");

    // Mall list envelope (§4.1, §7).
    LIST_ENVELOPE = ("mall-list.envelope", "§4.1", Contract, Contract, "the mall list response is an object with success (boolean), code (string), msg (string) and data (array of malls)");
    LIST_SUCCESS_CODE = ("mall-list.envelope.success-code", "§7.1", Contract, Contract, "success is true exactly when code is \"0000\", and then data is an array");
    LIST_FAILURE_NO_DATA = ("mall-list.envelope.failure-no-data", "§7", Contract, Contract, "a response with success false carries no mall records");

    // Mall record (§2.2, §3).
    MALL_FIELDS = ("mall.fields", "§2.2", Contract, Contract, "every mall field of §2.2 is present with its stated type and nullability");
    MALL_STATE = ("mall.state", "§3", Contract, Contract, "state is 0 (pending online), 1 (online) or 2 (offline)");
    MALL_INTERNAL_STATE = ("mall.internal-state", "§3", Contract, Contract, "internalState is 1 (enabled) or 0 (disabled)");
    MALL_IS_DELETE = ("mall.is-delete", "§3", Contract, Contract, "isDelete is 0 (not deleted) or 1 (deleted)");
    MALL_DELETE_TIME = ("mall.delete-time", "§2.2", Contract, Contract, "deleteTime is the empty string when isDelete is 0");
    MALL_DIGIT_STRINGS = ("mall.digit-strings", "§2.2", Contract, Contract, "mallSn and templateId are digit strings");
    MALL_DATETIME = ("mall.datetime", "§2.2", Contract, Contract, "ctime (and topTime when set) is a real calendar time YYYY-MM-DD HH:MM:SS");
    MALL_TOP_TIME = ("mall.top-time", "§2.2", Contract, Contract, "topTime is null when the mall is not pinned, not a zero time standing for null (a time before 1980 that precedes ctime: Go's 0001-01-01, SQL Server's 1900-01-01, the Unix epoch; the spec sets no other order between the two)");
    MALL_ALWAYS_NULL_FIELDS = ("mall.always-null-fields", "§2.2", Contract, Contract, "the 15 always-null fields are present in each mall record (their type is open)");
    MALL_TAGS = ("mall.tags", "§2.2", Contract, Contract, "tags is an array of strings (the set of values is open)");
    MALL_CROSS_CITY = ("mall.cross-city-payments", "§2.6", Contract, Contract, "crossCityPayments is an array of {payToolCode, payToolCodeDesc, status, statusDesc}; status is a string or a number");
    MALL_SELLER = ("mall.seller", "§2.3", Contract, Contract, "seller has the fields of §2.3; only storeName and crossCityTerminalSn may be null");
    MALL_ORDER_STATISTICS = ("mall.order-statistics", "§2.4", Contract, Contract, "orderStatistics has integer totalNum and totalAmount and decimal-text totalQuantity");
    MALL_SELLER_STATISTICS = ("mall.seller-statistics", "§2.5", Contract, Contract, "sellerStatisticsModel is null or an object with an integer orderFailNum");

    // Products (§2.7, §2.8, §4.2).
    PRODUCTS_SHAPE = ("products.shape", "§4.2", Contract, Contract, "the products response is a JSON array of products, with no envelope");
    PRODUCT_FIELDS = ("product.fields", "§2.7", Contract, Contract, "every product has spuId, converImages (array), productIntroduction (string), title and skuResults (array)");
    PRODUCT_DIGIT_STRINGS = ("product.digit-strings", "§2.7", Contract, Contract, "spuId and skuId are digit strings");
    PRODUCT_INTRODUCTION = ("product.introduction", "§2.7", Contract, Contract, "productIntroduction is a string holding a JSON array of text or bigImg content blocks");
    SKU_FIELDS = ("sku.fields", "§2.8", Contract, Contract, "every SKU has skuId, skuName/skuTitle (string or null), integer price and stockType, and quantity");

    // Additive changes: reported, never failing.
    EXTRA_FIELDS = ("info.extra-fields", "§2", Info, Contract, "fields the spec does not list (an additive change, not a break)");

    // Paging walker (§4.1).
    PAGING_END_SIGNAL = ("paging.end-signal", "§4.1", Observed, Contract, "the page after a list's last full page is a success with an empty data array (observed: the spec does not show how a list ends; a service that answers that page 2xx with a failure envelope, such as a \"no more data\" code, or 404 or 410, only warns when another walk read the whole list and this one read it all too)");
    PAGING_PAGE_FAILED = ("paging.page-failed", "§4.1", Contract, Transport, "every page of a walk made of valid signed requests is a success envelope with a data array");
    PAGING_PAGE_SIZE = ("paging.page-size", "§4.1", Contract, Contract, "no page holds more than cursor.count records");
    PAGING_DUPLICATE = ("paging.duplicate", "§4.1", Contract, Contract, "no mall (by mallSn) appears twice across the pages of one walk");
    PAGING_ENDLESS = ("paging.endless", "§4.1", Contract, Contract, "a cursor walk ends: no repeated cursor, no page without progress, within --max-pages");
    PAGING_SIZE_CONSISTENCY = ("paging.size-consistency", "§4.1", Contract, Contract, "walks with different page sizes give the same sequence of malls (no skip, stable id DESC order)");
    PAGING_REPEATABLE = ("paging.repeatable", "§1", Contract, Contract, "two walks with the same page size give the same malls (the operation only reads)");

    // Ownership and cross-endpoint consistency (§1, §4.1, §4.2).
    OWNERSHIP_MERCHANT = ("ownership.merchant", "§4.1", Contract, Contract, "every listed mall belongs to the requested merchant (seller.merchantId)");
    OWNERSHIP_UNKNOWN_MERCHANT = ("ownership.unknown-merchant", "§4.1", Contract, Contract, "a merchant id that does not exist lists no malls");
    OWNERSHIP_CURSOR_MERCHANT = ("ownership.cursor-merchant", "§4.1", Contract, Contract, "a cursor taken from another merchant's mall list, sent with this merchant's seller identity, lists none of the other merchant's malls: the cursor only pages the list of the merchant in filter.seller (the malls that belong to it, §1, §4.1), whatever the malls' internal ids");
    MALL_DESCRIPTIONS = ("mall.descriptions", "§2.2", Contract, Contract, "two values of state (0, 1, 2), of internalState (0, 1) or of a cross-city payToolCode (2, 3) never carry the same description in a run: each *Desc is the text description of its own value (a description taken from another field, or one text for every value, describes none)");
    MALL_DESCRIPTIONS_STABLE = ("mall.descriptions-stable", "§2.2", Observed, Contract, "a value of state, internalState, crossCityPaymentStatus, payToolCode or a cross-city payment's status carries one description in a run, and a cross-city status other than 0 does not carry the description of 0, pending activation (observed: the spec lists the values, not their texts, and a service may describe sub-states)");
    PRODUCTS_LISTED_MALL = ("products.listed-mall", "§4.2", Contract, Contract, "the products call with a listed mall's mallSn and signature answers with a products array");
    MALL_READ_ONLY = ("mall.read-only", "§3", Contract, Contract, "a mall's state, internalState, isDelete, topTime, ctime and other fields (order statistics aside) are the same in every page of the run that lists it, whichever case read it: the two operations only read and never move a mall between states");
    PRODUCTS_DISTINCT = ("products.distinct-per-mall", "§4.2", Observed, Contract, "the products call answers for the mall asked: the malls checked (three or more with products) do not all return one and the same product list, as a service that ignores mallSn does (observed: the spec does not make products unique to a mall, and a chain's malls may all sell one catalogue; a service that finds the mall without its mallSn fails products.mallsn-bound)");
    PRODUCTS_SIGNATURE_BOUND = ("products.signature-bound", "§4.2", Contract, Contract, "a tampered mall signature, or the signature of another listed mall, does not return that mall's products");
    PRODUCTS_MALLSN_BOUND = ("products.mallsn-bound", "§2.2", Contract, Contract, "a listed mall's signature sent with a mallSn that is no mall's does not return products: the signature identifies a mall together with its mallSn, not alone");
    PRODUCTS_SELLER_BOUND = ("products.seller-bound", "§4.2", Contract, Contract, "another merchant's seller identity does not return that mall's products");
    PRODUCTS_UNIQUE = ("products.unique", "§2.7", Contract, Contract, "no product (spuId) is listed twice in one products response, nor a SKU (skuId) under two products or twice under one: the operation returns the products of one mall, each with its own SKUs (§1, §2.7), not one entry a SKU nor the same product again");
    PRODUCTS_REPEATABLE = ("products.repeatable", "§1", Contract, Contract, "two products calls of one mall in a run answer the same products (as a set of spuIds, in any order): the operation returns all products of the mall (§1, §4.2) and only reads, so a read that answers fewer (a cache that answers an empty list every other call) or other products is not all of them");
    PRODUCTS_ORDER = ("products.order", "§4.2", Observed, Contract, "products are ordered by spuId descending, compared as numbers (shown, not stated)");

    // Authentication (§5).
    AUTH_REQUIRED = ("auth.required", "§5", Contract, Contract, "a request without Authorization gets no merchant data");
    AUTH_SIGNATURE = ("auth.signature", "§5", Contract, Contract, "a request with a wrong signature gets no merchant data");
    AUTH_SIGNATURE_REPLAY = ("auth.signature-replay", "§5", Contract, Contract, "the valid signature of another body of the same operation, moved onto a request, gets no merchant data (the signature is bound to the body)");
    AUTH_SIGNATURE_OTHER_OPERATION = ("auth.signature-other-operation", "§5", Contract, Contract, "the valid signature of a request to the other operation, moved onto a request, gets no merchant data");
    AUTH_SIGNATURE_RAW_BYTES = ("auth.signature-raw-bytes", "§5", Contract, Contract, "a correctly signed body in another JSON spelling (whitespace, key order, escaped characters) is served as its compact spelling is: the signature covers the raw bytes sent, not a re-serialization of the parsed body");
    AUTH_APPID_MATCH = ("auth.appid-match", "§5.1", Observed, Contract, "a request whose Authorization appid differs from the body's appid gets no merchant data (observed: §5.1 shows the two equal in every call, it states no rule for a mismatch; the signature still binds the body)");

    // Case-file assertions and snapshots.
    CASE_ASSERT = ("case.assert", "case file", Contract, Contract, "a JSONPath assertion written in the case file holds");
    SNAPSHOT_MATCH = ("snapshot.match", "snapshot", Contract, Contract, "the response keeps the shape of its recorded snapshot: no field removed, no type changed, no value outside a closed set, nothing newly null (after redactions)");
    SNAPSHOT_DATA = ("snapshot.data", "snapshot", Observed, Contract, "the response's data equals its recorded snapshot (values, records, order; after redactions): data changes on a live service, so a difference warns unless --strict");

    // Fuzzing properties (§4, §7).
    FUZZ_NO_SERVER_ERROR = ("fuzz.no-server-error", "-", Contract, Robustness, "no generated request is answered with a 5xx status or a dropped connection (robustness: the spec has no rule on statuses)");
    FUZZ_TIMELY = ("fuzz.timely", "-", Contract, Robustness, "every generated request is answered within --timeout (robustness: a hang on an odd request)");
    FUZZ_JSON = ("fuzz.json-body", "§4", Contract, Transport, "every generated request is answered with a JSON body");
    FUZZ_CONTRACT = ("fuzz.success-contract", "§4", Contract, Contract, "a success response to a generated request passes every contract check of run");
    FUZZ_ERROR_NO_DATA = ("fuzz.error-no-data", "§7", Contract, Contract, "an error response to a generated request carries no data");
    FUZZ_OWNERSHIP = ("fuzz.ownership", "§4.1", Contract, Contract, "no generated request returns a mall of another merchant");
}

/// The fuzz properties, in the order they are reported (`fuzz` checks them; a saved fuzz
/// regression case lists them in `expect.checks`).
pub static FUZZ_PROPERTIES: [&Check; 6] = [
    &FUZZ_NO_SERVER_ERROR,
    &FUZZ_TIMELY,
    &FUZZ_JSON,
    &FUZZ_CONTRACT,
    &FUZZ_ERROR_NO_DATA,
    &FUZZ_OWNERSHIP,
];

/// The warning forms of the robustness checks (`--robustness warn`): same ids, observed
/// severity, so a finding warns (and fails only under `--strict`). Not in [`CATALOG`].
pub static ROBUSTNESS_SERVER_ERROR_WARNING: Check = Check {
    severity: Severity::Observed,
    ..ROBUSTNESS_SERVER_ERROR
};
/// See [`ROBUSTNESS_SERVER_ERROR_WARNING`].
pub static ROBUSTNESS_HANG_WARNING: Check = Check {
    severity: Severity::Observed,
    ..ROBUSTNESS_HANG
};

/// Looks up a check by its id.
pub fn find(id: &str) -> Option<&'static Check> {
    CATALOG.iter().copied().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut seen = HashSet::new();
        for c in CATALOG {
            assert!(seen.insert(c.id), "duplicate id {}", c.id);
            assert!(
                c.id.chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch == '.' || ch == '-'),
                "bad id {}",
                c.id
            );
            assert!(!c.summary.is_empty());
        }
    }

    #[test]
    fn find_returns_the_entry() {
        assert_eq!(find("mall.state"), Some(&MALL_STATE));
        assert_eq!(find("mall.stat"), None);
    }
}
