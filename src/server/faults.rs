//! Fault modes of the reference server: one enum holding every contract fault (one thing broken,
//! with the catalogue check that must catch it), every tolerated variation and every fuzz trigger.
//!
//! The pure JSON rewrites a fault applies to mall records, products and SKUs live here too; the
//! routes apply transport, paging, ownership and auth faults.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value, json};

use crate::server::data::ALWAYS_NULL_FIELDS;
use crate::spec::catalog::{
    AUTH_REQUIRED, AUTH_SIGNATURE, AUTH_SIGNATURE_OTHER_OPERATION, AUTH_SIGNATURE_RAW_BYTES,
    AUTH_SIGNATURE_REPLAY, FUZZ_CONTRACT, FUZZ_NO_SERVER_ERROR, FUZZ_OWNERSHIP, FUZZ_TIMELY,
    HARNESS_CURSOR_RULE, HTTP_SERVER_ERROR, LIST_ENVELOPE, LIST_FAILURE_NO_DATA, LIST_SUCCESS_CODE,
    MALL_ALWAYS_NULL_FIELDS, MALL_CROSS_CITY, MALL_DATETIME, MALL_DELETE_TIME, MALL_DESCRIPTIONS,
    MALL_DIGIT_STRINGS, MALL_FIELDS, MALL_INTERNAL_STATE, MALL_IS_DELETE, MALL_ORDER_STATISTICS,
    MALL_READ_ONLY, MALL_SELLER, MALL_SELLER_STATISTICS, MALL_STATE, MALL_TAGS, MALL_TOP_TIME,
    OWNERSHIP_CURSOR_MERCHANT, OWNERSHIP_MERCHANT, OWNERSHIP_UNKNOWN_MERCHANT, PAGING_DUPLICATE,
    PAGING_ENDLESS, PAGING_PAGE_SIZE, PAGING_REPEATABLE, PAGING_SIZE_CONSISTENCY,
    PRODUCT_DIGIT_STRINGS, PRODUCT_FIELDS, PRODUCT_INTRODUCTION, PRODUCTS_MALLSN_BOUND,
    PRODUCTS_REPEATABLE, PRODUCTS_SELLER_BOUND, PRODUCTS_SHAPE, PRODUCTS_SIGNATURE_BOUND,
    PRODUCTS_UNIQUE, RESPONSE_DUPLICATE_KEY, RESPONSE_JSON, RESPONSE_NUMBER_RANGE, SKU_FIELDS,
    TRANSPORT_BODY_SIZE, TRANSPORT_DROPPED, TRANSPORT_RATE_LIMITED, TRANSPORT_REDIRECT,
    TRANSPORT_TIMEOUT,
};
use crate::verdict::check::Check;

/// -2^63 as a float: what `-9223372036854775809` rounds to. The `order-total-num-below-long`
/// fault puts it in the data and the wire writes it as [`BELOW_LONG_LITERAL`].
pub(crate) const BELOW_LONG_FLOAT: f64 = -9_223_372_036_854_775_808.0;
/// The integer literal one below the Long range.
pub(crate) const BELOW_LONG_LITERAL: &str = "-9223372036854775809";

/// What a fault is for.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A contract break that `mallcheck run` must catch with this check.
    Contract(&'static Check),
    /// A narrow-trigger break only the fuzzer is expected to find, with this check.
    Fuzz(&'static Check),
    /// A tolerated variation that must pass.
    Variation,
    /// A service that echoes the signature in a refusal: no check catches it (the run stops at
    /// the preflight, or every case errs), it is there for the secrets tests.
    SecretEcho,
}

macro_rules! faults {
    ($( $(#[$doc:meta])* $variant:ident = ($name:literal, $kind:expr, $desc:literal); )*) => {
        /// A fault mode or tolerated variation of the reference server, selected by `--fault NAME`
        /// or by the base-URL path prefix `/fault/NAME`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Fault {
            $( $(#[$doc])* $variant, )*
        }

        static ALL: &[Fault] = &[ $( Fault::$variant ),* ];

        impl Fault {
            /// The kebab-case name used by `--fault` and the `/fault/NAME` prefix.
            pub fn name(self) -> &'static str {
                match self { $( Fault::$variant => $name, )* }
            }

            /// One line on what the fault breaks (or varies).
            pub fn description(self) -> &'static str {
                match self { $( Fault::$variant => $desc, )* }
            }

            fn kind(self) -> Kind {
                match self { $( Fault::$variant => $kind, )* }
            }
        }
    };
}

use Kind::{Contract, Fuzz, SecretEcho, Variation};

faults! {
    /// `state` is 3.
    MallStateOutOfRange = ("mall-state-out-of-range", Contract(&MALL_STATE), "every mall has state 3, outside 0/1/2");
    /// `stateDesc` made from `internalState`.
    MallStateDescFromInternalState = ("mall-state-desc-from-internal-state", Contract(&MALL_DESCRIPTIONS), "stateDesc is made from internalState (online when enabled, offline when disabled), so two states carry one description");
    /// One `stateDesc` for every state.
    MallStateDescConstant = ("mall-state-desc-constant", Contract(&MALL_DESCRIPTIONS), "stateDesc is \"正常\" (normal) whatever the state");
    MallStateFlips = ("mall-state-flips", Contract(&MALL_READ_ONLY), "every other mall-list call shows the newest mall in another state (online if it is not, else offline): a read moves a mall between states");
    /// A read changes a mall's creation time.
    MallCtimeDrifts = ("mall-ctime-drifts", Contract(&MALL_READ_ONLY), "every other mall-list call shows the newest mall with another ctime (a shared date formatter racing): a mall's creation time changes between reads");
    /// A read activates a cross-city status.
    MallCrossCityActivatedOnRead = ("mall-cross-city-activated-on-read", Contract(&MALL_READ_ONLY), "every other mall-list call shows the newest mall's crossCityPaymentStatus activated (1): a read moves a cross-city status (§3)");
    /// A read adds a tag.
    MallTagAddedOnRead = ("mall-tag-added-on-read", Contract(&MALL_READ_ONLY), "every other mall-list call shows the newest mall with one more tag: a read changes a mall");
    /// A read bumps the edition.
    MallEditionBumpedOnRead = ("mall-edition-bumped-on-read", Contract(&MALL_READ_ONLY), "every other mall-list call shows the newest mall's edition one higher (an optimistic-lock version bumped by a read)");
    /// A read pins a mall.
    MallPinnedOnRead = ("mall-pinned-on-read", Contract(&MALL_READ_ONLY), "every other mall-list call shows the newest mall pinned (topTime set, or cleared if it was): a read changes a mall");
    /// `internalState` is 2.
    MallInternalStateOutOfRange = ("mall-internal-state-out-of-range", Contract(&MALL_INTERNAL_STATE), "every mall has internalState 2, outside 0/1");
    /// `isDelete` is 5.
    MallIsDeleteOutOfRange = ("mall-is-delete-out-of-range", Contract(&MALL_IS_DELETE), "every mall has isDelete 5, outside 0/1");
    /// `deleteTime` set on a live mall.
    MallDeleteTimeWhileLive = ("mall-delete-time-while-live", Contract(&MALL_DELETE_TIME), "malls with isDelete 0 carry a non-empty deleteTime");
    /// `mallName` removed.
    MallNameMissing = ("mall-name-missing", Contract(&MALL_FIELDS), "the required field mallName is missing from every mall");
    /// `edition` is a string.
    MallEditionString = ("mall-edition-string", Contract(&MALL_FIELDS), "edition is a string (\"2\") instead of an integer");
    /// `isShowBills` is a string.
    MallIsShowBillsString = ("mall-is-show-bills-string", Contract(&MALL_FIELDS), "isShowBills is the string \"true\" instead of a boolean");
    /// One always-null field removed.
    MallAlwaysNullFieldMissing = ("mall-always-null-field-missing", Contract(&MALL_ALWAYS_NULL_FIELDS), "the always-null field serialConfigId is absent from every mall");
    /// `ctime` in ISO-8601 form.
    MallCtimeIso = ("mall-ctime-iso", Contract(&MALL_DATETIME), "ctime uses the ISO-8601 form 2023-05-06T07:08:09+08:00");
    /// `ctime` an impossible date.
    MallCtimeImpossible = ("mall-ctime-impossible", Contract(&MALL_DATETIME), "ctime is the impossible time 2024-13-32 25:61:61");
    /// `topTime` in ISO-8601 form.
    /// Every mall pinned before its creation time (test data).
    MallPinnedBeforeCreation = ("mall-pinned-before-creation", Variation, "every mall has topTime 2021-06-01 10:00:00, before its creation time (test data drawn at random): the spec sets no order between the two, only a zero time standing for null fails mall.top-time");
    /// A zero time for a mall not pinned.
    MallTopTimeZero = ("mall-top-time-zero", Contract(&MALL_TOP_TIME), "a mall not pinned has topTime 1970-01-01 08:00:00 (the zero time of a Java Date in UTC+8) instead of null");
    MallTopTimeIso = ("mall-top-time-iso", Contract(&MALL_DATETIME), "topTime is set on every mall in the ISO-8601 form 2024-02-03T04:05:06Z");
    /// `mallSn` not a digit string.
    MallSnNotDigits = ("mall-sn-not-digits", Contract(&MALL_DIGIT_STRINGS), "mallSn carries a letter prefix (MS1000007919)");
    /// `templateId` not a digit string.
    MallTemplateIdNotDigits = ("mall-template-id-not-digits", Contract(&MALL_DIGIT_STRINGS), "templateId is T3001 instead of a digit string");
    /// Tags are numbers.
    MallTagsNotStrings = ("mall-tags-not-strings", Contract(&MALL_TAGS), "tags holds numbers instead of strings");
    /// Cross-city payment entries lack payToolCode.
    CrossCityEntryIncomplete = ("cross-city-entry-incomplete", Contract(&MALL_CROSS_CITY), "crossCityPayments entries lack payToolCode (and malls without entries get such an entry)");
    /// Cross-city payment status is a boolean.
    CrossCityStatusBool = ("cross-city-status-bool", Contract(&MALL_CROSS_CITY), "crossCityPayments[].status is a boolean instead of a string or number");
    /// `seller.merchantSn` null.
    SellerMerchantSnNull = ("seller-merchant-sn-null", Contract(&MALL_SELLER), "seller.merchantSn is null although only storeName and crossCityTerminalSn may be");
    /// `seller.storeId` removed.
    SellerStoreIdMissing = ("seller-store-id-missing", Contract(&MALL_SELLER), "seller.storeId is missing");
    /// `totalQuantity` not decimal text.
    OrderTotalQuantityNotDecimal = ("order-total-quantity-not-decimal", Contract(&MALL_ORDER_STATISTICS), "orderStatistics.totalQuantity is \"12件\", not decimal text");
    /// `totalNum` a string.
    OrderTotalNumString = ("order-total-num-string", Contract(&MALL_ORDER_STATISTICS), "orderStatistics.totalNum is a string instead of an integer");
    /// `totalAmount` a fraction.
    OrderTotalAmountFraction = ("order-total-amount-fraction", Contract(&MALL_ORDER_STATISTICS), "orderStatistics.totalAmount is 12.5, not an integer");
    /// `totalNum` one below the Long range.
    OrderTotalNumBelowLong = ("order-total-num-below-long", Contract(&MALL_ORDER_STATISTICS), "orderStatistics.totalNum is -9223372036854775809, one below the Long range (read as a float it rounds to -2^63)");
    /// `sellerStatisticsModel` of the wrong shape.
    SellerStatisticsWrongShape = ("seller-statistics-wrong-shape", Contract(&MALL_SELLER_STATISTICS), "sellerStatisticsModel is {\"orderFailNum\": \"3\"} on every mall");
    /// `spuId` not a digit string.
    ProductSpuIdNotDigits = ("product-spu-id-not-digits", Contract(&PRODUCT_DIGIT_STRINGS), "spuId carries a letter prefix (SPU90003)");
    /// `skuId` not a digit string.
    SkuIdNotDigits = ("sku-id-not-digits", Contract(&PRODUCT_DIGIT_STRINGS), "skuId carries a letter prefix (SKU900030)");
    /// `converImages` null.
    ProductCoverImagesNotArray = ("product-cover-images-not-array", Contract(&PRODUCT_FIELDS), "converImages is null instead of an array");
    /// `title` removed.
    ProductTitleMissing = ("product-title-missing", Contract(&PRODUCT_FIELDS), "the product title is missing");
    /// `productIntroduction` not JSON.
    ProductIntroNotJson = ("product-intro-not-json", Contract(&PRODUCT_INTRODUCTION), "productIntroduction is HTML text, not a JSON array");
    /// `productIntroduction` not a string.
    ProductIntroNotString = ("product-intro-not-string", Contract(&PRODUCT_INTRODUCTION), "productIntroduction is the block array itself instead of a string holding it");
    /// `productIntroduction` with an unknown block type.
    ProductIntroUnknownBlock = ("product-intro-unknown-block", Contract(&PRODUCT_INTRODUCTION), "productIntroduction holds a block of type video");
    /// `productIntroduction` with an incomplete block.
    ProductIntroIncompleteBlock = ("product-intro-incomplete-block", Contract(&PRODUCT_INTRODUCTION), "productIntroduction holds a bigImg block without img_list");
    /// `skuName` a number.
    SkuNameNumber = ("sku-name-number", Contract(&SKU_FIELDS), "skuName is a number instead of a string or null");
    /// `price` a string.
    SkuPriceString = ("sku-price-string", Contract(&SKU_FIELDS), "price is a string instead of an integer");
    /// One SKU price a string, in one mall late in the list.
    SkuPriceStringInOneMall = ("sku-price-string-in-one-mall", Contract(&SKU_FIELDS), "one SKU price is a string, in the products of one mall near the end of the main merchant's list (neither the first, the last nor a deleted mall: a fixed sample misses it)");
    /// `quantity` removed.
    SkuQuantityMissing = ("sku-quantity-missing", Contract(&SKU_FIELDS), "the SKU field quantity is missing");
    /// Products wrapped in an envelope.
    ProductsEnveloped = ("products-enveloped", Contract(&PRODUCTS_SHAPE), "the products response is wrapped in a success/code/msg/data envelope");
    /// `success` true with an error code.
    EnvelopeSuccessWithErrorCode = ("envelope-success-with-error-code", Contract(&LIST_SUCCESS_CODE), "the mall list answers success true with code 9999");
    /// `success` false with data.
    EnvelopeFailureWithData = ("envelope-failure-with-data", Contract(&LIST_FAILURE_NO_DATA), "the mall list answers success false (code 5001) and still carries the malls");
    /// `code` removed.
    EnvelopeCodeMissing = ("envelope-code-missing", Contract(&LIST_ENVELOPE), "the mall list envelope has no code");
    /// `data` not an array.
    EnvelopeDataNotArray = ("envelope-data-not-array", Contract(&LIST_ENVELOPE), "the mall list data is an object {\"list\": [...]} instead of an array");
    /// A page longer than `count`.
    PagingPageOverCount = ("paging-page-over-count", Contract(&PAGING_PAGE_SIZE), "every page holds count + 1 records");
    /// Pages overlap.
    PagingOverlap = ("paging-overlap", Contract(&PAGING_DUPLICATE), "each next page starts with the cursor mall itself, so pages overlap by one");
    /// A record skipped after each page.
    PagingSkipRecord = ("paging-skip-record", Contract(&PAGING_SIZE_CONSISTENCY), "the mall right after the cursor is skipped when count > 1");
    /// Order depends on the page size.
    PagingUnstableOrder = ("paging-unstable-order", Contract(&PAGING_SIZE_CONSISTENCY), "the order of the list depends on cursor.count");
    /// The walk never ends.
    PagingEndless = ("paging-endless", Contract(&PAGING_ENDLESS), "the last page is never short: it repeats the last count malls and the same cursor forever");
    /// Two identical walks differ.
    PagingNondeterministic = ("paging-nondeterministic", Contract(&PAGING_REPEATABLE), "the malls within each page come in a different order on every call");
    /// Another merchant's mall in MAIN's list.
    OwnershipForeignMall = ("ownership-foreign-mall", Contract(&OWNERSHIP_MERCHANT), "MAIN's list also holds the first mall of another merchant");
    FirstCallForeign = ("first-call-foreign", Contract(&OWNERSHIP_MERCHANT), "the first signed mall-list call of MAIN the server answers (the run's preflight) lists another merchant's first page, as a warm-up cache filled by the wrong key does; every later call is right");
    FirstCallEmpty = ("first-call-empty", Contract(&PAGING_REPEATABLE), "the first signed mall-list call of MAIN the server answers (the run's preflight) lists no mall, as a lazy loader that starts loading on it does; every later call lists MAIN's malls");
    /// An unknown merchant gets malls.
    OwnershipUnknownMerchant = ("ownership-unknown-merchant", Contract(&OWNERSHIP_UNKNOWN_MERCHANT), "an unknown merchant id lists a mall (relabelled with that id)");
    /// The page past the end of the list is a failure envelope.
    ListEndFailure = ("list-end-failure", Variation, "the page past the end of the list (a cursor after its last mall) is answered HTTP 200 with a failure envelope, code 2001, \"没有更多数据\" (no more data), as many platforms end a list (only a warning, paging.end-signal: §4.1 does not show how a list ends; --strict fails it)");
    /// A call with `X-env-flag` reads another environment's catalogue.
    ProductsEnvFlagCatalogue = ("products-env-flag-catalogue", Variation, "a products call with X-env-flag reads the catalogue of the environment it names, which holds one more product (§5.3 leaves the header's purpose open: products.repeatable compares calls with the same X-env-flag only)");
    /// The products call of one mall drops the connection.
    ProductsDropOneMall = ("products-drop-one-mall", Contract(&TRANSPORT_DROPPED), "the products call of one mall of MAIN (neither the first, the last nor a deleted one) closes the connection with no answer, as a Go server's recovered panic does (a crash on that mall's data): a failure, not an unreachable service");
    /// An unknown appid is let through unverified.
    AuthUnknownAppidUnverified = ("auth-unknown-appid-unverified", Contract(&AUTH_SIGNATURE), "a request whose Authorization names an appid the service has no key for is served without any signature check (the check runs only for the appids it knows)");
    /// A refusal hidden as an empty success.
    AuthRefusalEmptySuccess = ("auth-refusal-empty-success", Contract(&AUTH_REQUIRED), "a request without a valid Authorization is answered HTTP 200 with success true, code 0000 and no malls (products: []), as a service that filters by the caller's rights would: the refusal is hidden as a claim that the merchant has no mall");
    /// A refusal followed by the data.
    AuthRefusalThenData = ("auth-refusal-then-data", Contract(&AUTH_SIGNATURE), "a request without a valid Authorization is answered 401 with the error JSON followed by the whole answer it would get if authenticated (a handler that wrote its refusal and did not return): the data leaks");
    /// The page past the end of the list is a 404.
    ListEndNotFound = ("list-end-not-found", Variation, "the page past the end of the list is answered HTTP 404 with a failure envelope, code 2001, \"没有更多数据\" (no more data): no such page (only a warning, paging.end-signal: the spec shows neither how a list ends nor any status code; --strict fails it)");
    /// Every mall returns the same products.
    ProductsSameForEveryMall = ("products-same-for-every-mall", Variation, "every mall returns the products of MAIN's first mall (only a warning, products.distinct-per-mall: the spec does not make catalogues differ between malls; --strict fails it)");
    /// The mall signature is not checked.
    ProductsSignatureIgnored = ("products-signature-ignored", Contract(&PRODUCTS_SIGNATURE_BOUND), "products are returned for a tampered mall signature");
    /// An empty mall signature is not checked.
    ProductsEmptySignature = ("products-empty-signature", Contract(&PRODUCTS_SIGNATURE_BOUND), "the mall signature is checked only when one is given: an empty signature returns the mall's products");
    /// A mall signature is accepted when it begins the mall's (`startsWith`).
    ProductsSignatureOfAnyMall = ("products-signature-of-any-mall", Contract(&PRODUCTS_SIGNATURE_BOUND), "the mall is found by its mallSn and the signature need only be one of the owner's malls (an ORM join across the merchant's malls): a mall's number with another mall's signature returns its products");
    ProductsSignaturePrefix = ("products-signature-prefix", Contract(&PRODUCTS_SIGNATURE_BOUND), "the mall signature is compared with `startsWith`: any non-empty beginning of the mall's signature returns its products");
    /// Every other read of a mall's products has no SKUs.
    ProductsSkusDroppedOnReread = ("products-skus-dropped-on-reread", Contract(&PRODUCTS_REPEATABLE), "every other products call of a mall answers the same products with empty skuResults (a lazy relation not loaded when the products come from a cache)");
    /// Every second products call of a mall answers an empty list.
    ProductsEmptyEveryOtherRead = ("products-empty-every-other-read", Contract(&PRODUCTS_REPEATABLE), "every second products call of a mall answers an empty list (a cache that stores the empty answer of a miss)");
    /// The last page, exactly full, loses its last mall.
    PagingLastFullPageShort = ("paging-last-full-page-short", Contract(&PAGING_SIZE_CONSISTENCY), "the last page of the list, when it is exactly full, loses its last mall (an off-by-one in the test of whether more follow): only a walk at a size the list's length is a multiple of sees it");
    /// Every product carries the SKUs of the first.
    ProductsSkusOfTheFirst = ("products-skus-of-the-first", Contract(&PRODUCTS_UNIQUE), "every product of a mall carries the SKUs of its first product (a prefetch keyed by the mall, not the product), so skuIds repeat across products");
    /// A product listed twice.
    ProductsDuplicateSpu = ("products-duplicate-spu", Contract(&PRODUCTS_UNIQUE), "the products of a mall list their first product twice");
    /// The mall is found by its signature alone.
    ProductsFoundBySignature = ("products-found-by-signature", Contract(&PRODUCTS_MALLSN_BOUND), "the products call finds the mall by its signature alone: any mallSn with a mall's signature returns that mall's products");
    /// The seller is not checked.
    ProductsSellerIgnored = ("products-seller-ignored", Contract(&PRODUCTS_SELLER_BOUND), "products are returned to another merchant's seller identity");
    /// Requests without Authorization are served.
    AuthIgnored = ("auth-ignored", Contract(&AUTH_REQUIRED), "a request without Authorization is answered with data");
    /// Characters after the valid signature are ignored.
    AuthSignatureSuffixIgnored = ("auth-signature-suffix-ignored", Contract(&AUTH_SIGNATURE), "a signature is accepted when it begins with the valid one (`given.startsWith(valid)`): the valid signature with anything after it passes");
    /// Any signature is accepted.
    AuthUnflaggedProductsUnsigned = ("auth-unflagged-products-unsigned", Contract(&AUTH_SIGNATURE), "a products call without the optional X-env-flag header (a legacy client's path) has only its Authorization's appid checked: any signature is accepted there");
    AuthSignaturePrefix = ("auth-signature-prefix", Contract(&AUTH_SIGNATURE), "only the first 8 characters of the signature are compared: a signature wrong inside is accepted");
    AuthSignatureStartsWith = ("auth-signature-startswith", Contract(&AUTH_SIGNATURE), "a signature is accepted when the valid one begins with it: any prefix of the valid signature is served");
    AuthUnkeyedSignature = ("auth-unkeyed-signature", Contract(&AUTH_SIGNATURE), "the signature is checked without the key: the md5 of the body alone (HMAC under an empty key) is accepted");
    AuthSkippedOnContinuation = ("auth-skipped-on-continuation", Contract(&AUTH_SIGNATURE), "a mall-list call with an endCursor is answered without any Authorization check (a gateway that trusts continuation pages)");
    AuthContinuationUnsigned = ("auth-continuation-unverified", Contract(&AUTH_SIGNATURE), "a mall-list call with an endCursor needs an Authorization header, but its signature is not verified");
    AuthSkippedWithoutEnvFlag = ("auth-skipped-without-env-flag", Contract(&AUTH_REQUIRED), "a products call without the optional X-env-flag header is answered without any Authorization check");
    AuthAnySignature = ("auth-any-signature", Contract(&AUTH_SIGNATURE), "a wrong signature is accepted");
    /// Any signature seen before is accepted.
    AuthSignatureCache = ("auth-signature-cache", Contract(&AUTH_SIGNATURE_OTHER_OPERATION), "a signature seen on an earlier authenticated request (of either operation) is accepted on any body: the signature is checked against a cache, not the body");
    /// A signature seen before on the same operation is accepted.
    AuthSignatureCachePerOperation = ("auth-signature-cache-per-operation", Contract(&AUTH_SIGNATURE_REPLAY), "a signature seen on an earlier authenticated request of the same operation is accepted on any body of that operation");
    /// The Authorization appid is not compared.

    /// HTTP 500 with an HTML body.
    Http500Html = ("http-500-html", Contract(&HTTP_SERVER_ERROR), "every request is answered with HTTP 500 and an HTML error page");
    /// An empty body with status 200 on the products operation.
    ProductsEmpty200 = ("products-empty-200", Contract(&RESPONSE_JSON), "every products call, a valid one too, is answered HTTP 200 with an empty body");
    /// HTML with status 200.
    Html200 = ("html-200", Contract(&RESPONSE_JSON), "every request is answered with HTTP 200 and an HTML page");
    /// Truncated JSON.
    JsonTruncated = ("json-truncated", Contract(&RESPONSE_JSON), "the JSON body is cut in the middle (with a matching Content-Length)");
    /// Invalid UTF-8 in the body.
    InvalidUtf8 = ("invalid-utf8", Contract(&RESPONSE_JSON), "the JSON body holds bytes that are not UTF-8");
    /// A deeply nested body.
    DeepNesting = ("deep-nesting", Contract(&RESPONSE_JSON), "the body is 100,000 nested JSON arrays");
    /// A 20 MiB body.
    HugeBody = ("huge-body", Contract(&TRANSPORT_BODY_SIZE), "the body is a 20 MiB JSON document");
    /// The first byte comes after 30 s.
    SlowFirstByte = ("slow-first-byte", Contract(&TRANSPORT_TIMEOUT), "the server waits 30 s before answering");
    /// The body stalls halfway.
    StalledBody = ("stalled-body", Contract(&TRANSPORT_TIMEOUT), "the server sends half of the body, then stalls for 30 s");
    /// A redirect to itself.
    RedirectLoop = ("redirect-loop", Contract(&TRANSPORT_REDIRECT), "every request is answered 302 to the same URL");
    /// A redirect to another host.
    RedirectOtherHost = ("redirect-other-host", Contract(&TRANSPORT_REDIRECT), "every request is answered 302 to http://example.invalid/...");
    /// 500 when `cursor.count` > 80.
    FuzzCountOver80 = ("fuzz-count-over-80", Fuzz(&FUZZ_NO_SERVER_ERROR), "HTTP 500 only when cursor.count is above 80");
    /// 500 when `merchantUserId` holds a space.
    FuzzUserIdSpace = ("fuzz-user-id-space", Fuzz(&FUZZ_NO_SERVER_ERROR), "HTTP 500 only when merchantUserId contains a space");
    /// A page asked for more than 100 malls lists its first mall again at its end.
    FuzzPageOver100RepeatsAMall = ("fuzz-page-over-100-repeats-a-mall", Fuzz(&FUZZ_CONTRACT), "a mall-list page asked for more than 100 records lists its first mall again at its end (a page size no walk of run asks for)");
    /// 500 when the cursor holds a quote.
    FuzzCursorQuote = ("fuzz-cursor-quote", Fuzz(&FUZZ_NO_SERVER_ERROR), "HTTP 500 when cursor.endCursor holds a single quote (a cursor pasted into SQL unescaped)");
    /// Every merchant's malls listed when `filter.seller.merchantId` is no string.
    FuzzListMerchantLike = ("fuzz-list-merchant-like", Fuzz(&FUZZ_OWNERSHIP), "the mall list filters by merchant with SQL LIKE: a merchantId of `%` lists every merchant's malls");
    FuzzListMerchantOptional = ("fuzz-list-merchant-optional", Fuzz(&FUZZ_OWNERSHIP), "a mall-list body whose filter.seller.merchantId is no string (left out, null, an object) lists every merchant's malls, as an ORM that drops an undefined filter member does");
    /// Products served when `seller.merchantId` is no string.
    FuzzProductsSellerOptional = ("fuzz-products-seller-optional", Fuzz(&FUZZ_OWNERSHIP), "a products body whose seller.merchantId is no string (left out, null, an object) is answered with the mall's products: the seller check is skipped, as an ORM that drops an undefined filter member does");
    /// 500 when `role` is empty.
    FuzzEmptyRole = ("fuzz-empty-role", Fuzz(&FUZZ_NO_SERVER_ERROR), "HTTP 500 only when role is the empty string");
    /// A 60 s hang when `endCursor` is "".
    FuzzEmptyCursorHang = ("fuzz-empty-cursor-hang", Fuzz(&FUZZ_TIMELY), "hangs 60 s only when cursor.endCursor is the empty string");
    /// Unknown fields everywhere.
    ExtraFields = ("extra-fields", Variation, "unknown fields in the envelope, malls, sellers, statistics, payments, products and SKUs; those of malls, sellers and payments differ on every read (a trace id)");
    /// Tag values the spec does not list.
    UnknownTags = ("unknown-tags", Variation, "tags carry values the spec does not list (vipOnly, 外卖)");
    /// `appType` 1 everywhere.
    AppTypeOne = ("app-type-one", Variation, "every mall has appType 1");
    /// Cross-city status as a string.
    StatusAsString = ("status-as-string", Variation, "crossCityPayments[].status is the string \"0\" (its declared type)");
    /// The always-null fields carry values.
    AlwaysNullWithValues = ("always-null-with-values", Variation, "the 15 always-null fields carry values (their type is open)");
    /// Cross-city statuses other than 0.
    CrossCityOtherStatus = ("cross-city-other-status", Variation, "cross-city statuses are 1 with the description 已开通");
    /// Products in spuId ascending order.
    ProductsAscending = ("products-ascending", Variation, "products come in spuId ascending order (only a warning)");
    AuthAppidIgnored = ("auth-appid-ignored", Variation, "the Authorization appid is not compared with the body's or the configured appid (only a warning: §5.1 shows the two equal, it states no rule)");
    /// gzip responses.
    Gzip = ("gzip", Variation, "responses are gzip-compressed when the request accepts gzip");
    /// Integers above 2^53.
    BigIntegers = ("big-integers", Variation, "totalNum is 2^53 + 1 and totalAmount is i64::MAX");
    /// The smallest Long.
    LongMin = ("long-min", Variation, "totalNum and totalAmount are -9223372036854775808, the smallest Long");
    /// MAIN has 2,000 malls.
    ManyMalls = ("many-malls", Variation, "MAIN has 2,000 malls");
    /// A 5,000-product mall.
    BigMall = ("big-mall", Variation, "the first mall of MAIN has 5,000 products");
    /// Refusals carry a numeric code.
    RefusalCodeNumber = ("refusal-code-number", Contract(&LIST_ENVELOPE), "every refusal's envelope carries its code as a number (4010), where §4.1 declares code a String");
    /// Refusals carry the success code.
    RefusalSuccessCode = ("refusal-success-code", Contract(&LIST_SUCCESS_CODE), "every refusal carries the success code 0000 (with success false)");
    /// The next cursor comes in a response header only.
    CursorTokenInHeader = ("cursor-token-in-header", Contract(&HARNESS_CURSOR_RULE), "the next cursor comes as a token of the service's own in the response header X-Next-Cursor only (§4.1 shows no way) and a mallSn as cursor is refused: mallcheck reads cursors from the body, so the walks cannot go on (could not test, naming the header), not a failed page");
    /// MAIN has no malls.
    NoMalls = ("no-malls", Variation, "MAIN exists and has no malls (a pass with --allow-empty-merchant; without it, nothing covered: exit 3)");
    PageSizesFrom10 = ("page-sizes-from-10", Variation, "pages of fewer than 10 malls are turned away (HTTP 400), as platforms that take only some page sizes do (§8 states no limits): those cases are skipped and those walks left out, saying so");
    ProductsRefusedEmpty200 = ("products-refused-empty-200", Variation, "a refused products call (no or a wrong signature, another seller, no such mall) is answered HTTP 200 with an empty body, as a Spring controller returning `ResponseEntity.ok(null)` does (§7.3 and §7.4 show neither statuses nor the products error shape)");
    /// Its own cursor tokens, and continuation pages not verified.
    CursorTokenContinuationUnverified = ("cursor-token-continuation-unverified", Contract(&AUTH_SIGNATURE), "the envelope gives the next cursor as a token of the service's own (`endCursor`; run with --cursor response:/endCursor) and a mall-list call with a cursor is answered without its signature verified: the continuation probe sends the first page's own token");
    CursorTokenInEnvelope = ("cursor-token-in-envelope", Contract(&HARNESS_CURSOR_RULE), "the envelope gives the next cursor as a token of the service's own (`endCursor`, §4.1 shows no way) and a mallSn as cursor is refused: under the default rule the walks cannot go on (could not test, naming --cursor response:/endCursor); with that rule the service passes");
    PageCap20 = ("page-cap-20", Variation, "a page never holds more than 20 malls, whatever cursor.count asks, without a word (a limit §8 leaves open): the walks go on past pages of 20");
    NoProducts = ("no-products", Variation, "every mall has no products (a pass with --allow-empty-merchant; without it, nothing covered: exit 3)");
    /// Nullable seller fields null everywhere.
    NullableSellerFieldsNull = ("nullable-seller-fields-null", Variation, "storeName and crossCityTerminalSn are null in every mall");
    /// No cross-city payments.
    EmptyCrossCityPayments = ("empty-cross-city-payments", Variation, "crossCityPayments is [] in every mall");
    /// A redirect to the same host on another port (another origin).
    RedirectOtherPort = ("redirect-other-port", Contract(&TRANSPORT_REDIRECT), "every request is answered 302 to the same host on the next port (another origin)");
    /// Rate limiting past the retry ceiling.
    RateLimited = ("rate-limited", Contract(&TRANSPORT_RATE_LIMITED), "every request is answered 429 with Retry-After: 30 (an error of the run, not of the contract)");
    /// The request echoed back, as a debugging proxy or a careless service does.
    EchoRequest = ("echo-request", Variation, "every answer echoes the request: its headers (Authorization included) and body in x-echo-* response headers and in an extra echo field of the JSON");
    /// An error page that echoes the request.
    EchoErrorPage = ("echo-error-page", Contract(&HTTP_SERVER_ERROR), "every request is answered with HTTP 500 and an HTML error page quoting the request's headers (Authorization included) and body");

    /// A refusal quoting the signature, spelt as the path says.
    EchoExpectedSignature = ("echo-expected-signature", SecretEcho, "a request whose signature does not match is answered 401 quoting the valid signature of its body (\"expected …\"), a value the client never sent");
    EchoSignature = ("echo-signature", SecretEcho, "every request is answered 401 with a message, after a raw U+202E, quoting the Authorization signature (the key, with --signer static); /fault/echo-signature/FORM/... spells it plain, upper, lower, json-u, percent, html-entities, mime-base64, mime-base64-json, line-break, hex or hex-upper");
    /// A huge response header.
    HugeHeader = ("huge-header", Variation, "every answer carries a 380 KB x-padding response header");
    // ---- Faults of real stacks (issue 22: connections, robustness, raw-byte signatures,
    // cross-merchant cursors). Kept in one block apart from the others.
    /// A stock-framework 500 on NaN and other odd JSON, then a connection dropped without
    /// `Connection: close`.
    FuzzOddJsonCrashCloses = ("fuzz-odd-json-crash-closes", Fuzz(&FUZZ_NO_SERVER_ERROR), "HTTP 500 (plain text) when the request body holds NaN, Infinity, a number out of range (1e999) or a lone surrogate, and the connection is then dropped at the next request without Connection: close, as a stock FastAPI service on uvicorn does");
    /// The signature is checked over the re-serialized parsed body, not the raw bytes.
    AuthSignatureOverReserializedJson = ("auth-signature-over-reserialized-json", Contract(&AUTH_SIGNATURE_RAW_BYTES), "the signature is checked over the parsed body serialized again (JSON.stringify(parsedBody)), not over the raw bytes: compact bodies pass, the same JSON with other whitespace, key order or escapes is refused");
    /// A signature compared only when one is given.
    AuthEmptySignatureAccepted = ("auth-empty-signature-accepted", Contract(&AUTH_SIGNATURE), "an Authorization value of the appid alone (no signature part) is served: the signature is compared only when one is given");
    /// An empty Authorization value served: only the header's presence is checked.
    AuthEmptyHeaderAccepted = ("auth-empty-header-accepted", Contract(&AUTH_REQUIRED), "a request whose Authorization header is empty is served: only the header's presence is checked");
    /// A cursor looked up among every merchant's malls, continuing that mall's merchant's list.
    PagingCursorAnyMerchant = ("paging-cursor-any-merchant", Contract(&OWNERSHIP_CURSOR_MERCHANT), "the cursor is looked up among every merchant's malls and the page continues the list of the cursor mall's merchant, whatever filter.seller says: another merchant's cursor lists that merchant's malls");

    // ---- Number spellings and parsing (issue 22 item 1, issue 20 item 6): how the body is
    // written, not what it holds. Applied by `mutate_spelling` and `Fault::respell` below.
    /// An Integer written with a fraction.
    SkuPriceFloat = ("sku-price-float", Contract(&SKU_FIELDS), "price (Integer) is written 3800.0, a float literal, as a float column or a default JSON encoder writes it");
    /// A Long written with a fraction.
    OrderTotalNumFloat = ("order-total-num-float", Contract(&MALL_ORDER_STATISTICS), "orderStatistics.totalNum (Long) is written 105112.0, a float literal");
    /// A Long written with an exponent.
    OrderTotalNumExponent = ("order-total-num-exponent", Contract(&MALL_ORDER_STATISTICS), "orderStatistics.totalNum (Long) is written 1e5, an exponent literal");
    /// A Byte written with a fraction.
    MallStateFloat = ("mall-state-float", Contract(&MALL_STATE), "state (Byte) is written 1.0, a float literal");
    /// A foreign merchantId before the right one in every seller.
    DuplicateMerchantId = ("duplicate-merchant-id", Contract(&RESPONSE_DUPLICATE_KEY), "every seller names merchantId twice: another merchant's id, then the right one (a last-wins reader sees only the right one)");
    /// An empty data list before the real one.
    DuplicateData = ("duplicate-data", Contract(&RESPONSE_DUPLICATE_KEY), "the mall list envelope names data twice: [] first, then the malls");
    /// A number beyond a double.
    OrderTotalNumHuge = ("order-total-num-huge", Contract(&RESPONSE_NUMBER_RANGE), "orderStatistics.totalNum is written 1e999, beyond a double's range");
    /// A number of ten thousand digits.
    OrderTotalAmountDigits = ("order-total-amount-digits", Contract(&RESPONSE_NUMBER_RANGE), "orderStatistics.totalAmount is an integer of 10,000 digits");
}

/// Length of the `huge-header` fault's header value.
pub(crate) const HUGE_HEADER_BYTES: usize = 380 * 1024;

/// What the echo faults give back of a request: every header as received and the body text.
#[derive(Debug, Clone)]
pub(crate) struct Echo {
    headers: Vec<(String, String)>,
    body: String,
}

impl Echo {
    /// The echo of a request's headers (names lower-case) and body.
    pub(crate) fn new(headers: Vec<(String, String)>, body: &[u8]) -> Echo {
        Echo {
            headers,
            body: String::from_utf8_lossy(body).into_owned(),
        }
    }

    fn header(&self, name: &str) -> &str {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map_or("", |(_, v)| v.as_str())
    }

    /// The request as text: header lines, a blank line, the body.
    fn request_text(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str("\r\n");
        out.push_str(&self.body);
        out
    }

    /// The `echo` field: headers and body as JSON strings, and the Authorization header in
    /// base64 (as tracing proxies forward it).
    fn value(&self) -> Value {
        let headers: Map<String, Value> = self
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        json!({
            "headers": headers,
            "body": self.body,
            "authorizationBase64": STANDARD.encode(self.header("authorization")),
        })
    }

    /// Adds the echo to a JSON answer as a tolerated extra field: first in an object (so that
    /// it is in the first bytes a client keeps), and in every object of an array.
    pub(crate) fn attach(&self, answer: &mut Value) {
        match answer {
            Value::Object(map) => {
                map.shift_insert(0, "echo".to_string(), self.value());
            }
            Value::Array(items) => {
                for item in items.iter_mut().filter_map(Value::as_object_mut) {
                    item.insert("echo".to_string(), self.value());
                }
            }
            _ => {}
        }
    }

    /// Response headers: each request header as `x-echo-<name>`, and the whole request
    /// percent-encoded in `x-echo-request`.
    pub(crate) fn response_headers(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .headers
            .iter()
            .map(|(k, v)| (format!("x-echo-{k}"), v.clone()))
            .collect();
        let encoded = utf8_percent_encode(&self.request_text(), NON_ALPHANUMERIC).to_string();
        out.push(("x-echo-request".to_string(), encoded));
        out
    }

    /// An error page that quotes the request unescaped, as careless error pages do.
    pub(crate) fn error_page(&self) -> String {
        format!(
            "<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head><body>\n\
             <h1>Internal Server Error</h1>\n<p>Authorization: {}</p>\n<pre>{}</pre>\n</body></html>\n",
            self.header("authorization"),
            self.request_text()
        )
    }
}

impl Fault {
    /// Every fault and variation, in declaration order.
    pub fn all() -> &'static [Fault] {
        ALL
    }

    /// Finds a fault by its kebab-case name.
    pub fn from_name(name: &str) -> Option<Fault> {
        ALL.iter().copied().find(|f| f.name() == name)
    }

    /// The catalogue id of the check that must catch the fault; `None` for a tolerated variation
    /// that must pass.
    pub fn expected_check(self) -> Option<&'static str> {
        match self.kind() {
            Kind::Contract(check) | Kind::Fuzz(check) => Some(check.id),
            Kind::Variation | Kind::SecretEcho => None,
        }
    }

    /// The exit code `mallcheck run` ends with against the fault: 3 when its check means the
    /// service could not be tested (a rate limit), 1 for a broken contract, 0 for a variation.
    pub fn expected_exit(self) -> i32 {
        match self.kind() {
            Kind::Contract(check) | Kind::Fuzz(check) if check.could_not_test() => {
                crate::exit::COULD_NOT_TEST
            }
            Kind::Contract(_) | Kind::Fuzz(_) => crate::exit::FAILURE,
            Kind::Variation => crate::exit::PASS,
            // Refused at the preflight: the service could not be tested.
            Kind::SecretEcho => crate::exit::COULD_NOT_TEST,
        }
    }

    /// Whether the fault echoes a secret for the secrets tests: every request is refused.
    pub fn is_secret_echo(self) -> bool {
        matches!(self.kind(), Kind::SecretEcho)
    }

    /// Whether only a narrow request trips the fault, so that only the fuzzer is expected to
    /// find it (a normal `mallcheck run` passes).
    pub fn is_fuzz_trigger(self) -> bool {
        matches!(self.kind(), Kind::Fuzz(_))
    }

    /// Rewrites one rendered mall record (spec §2.2 to §2.6) as this fault breaks or varies it.
    pub(crate) fn mutate_mall(self, mall: &mut Map<String, Value>) {
        match self {
            Fault::MallStateOutOfRange => set(mall, "state", json!(3)),
            Fault::MallInternalStateOutOfRange => set(mall, "internalState", json!(2)),
            Fault::MallIsDeleteOutOfRange => set(mall, "isDelete", json!(5)),
            Fault::MallDeleteTimeWhileLive if mall.get("isDelete") == Some(&json!(0)) => {
                set(mall, "deleteTime", json!("2024-01-02 03:04:05"));
            }
            Fault::MallNameMissing => {
                mall.shift_remove("mallName");
            }
            Fault::MallStateDescFromInternalState => {
                let enabled = mall.get("internalState") == Some(&json!(1));
                set(
                    mall,
                    "stateDesc",
                    json!(if enabled { "已上线" } else { "已下线" }),
                );
            }
            Fault::MallStateDescConstant => set(mall, "stateDesc", json!("正常")),
            Fault::MallEditionString => {
                let edition = mall
                    .get("edition")
                    .map(Value::to_string)
                    .unwrap_or_default();
                set(mall, "edition", json!(edition));
            }
            Fault::MallIsShowBillsString => set(mall, "isShowBills", json!("true")),
            Fault::MallAlwaysNullFieldMissing => {
                mall.shift_remove("serialConfigId");
            }
            Fault::MallCtimeIso => set(mall, "ctime", json!("2023-05-06T07:08:09+08:00")),
            Fault::MallCtimeImpossible => set(mall, "ctime", json!("2024-13-32 25:61:61")),
            Fault::MallTopTimeIso => set(mall, "topTime", json!("2024-02-03T04:05:06Z")),
            Fault::MallPinnedBeforeCreation => {
                set(mall, "topTime", json!("2021-06-01 10:00:00"));
            }
            Fault::MallTopTimeZero => {
                if mall.get("topTime").is_none_or(Value::is_null) {
                    set(mall, "topTime", json!("1970-01-01 08:00:00"));
                }
            }
            Fault::MallSnNotDigits => {
                let sn = mall
                    .get("mallSn")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                set(mall, "mallSn", json!(format!("{MALL_SN_PREFIX}{sn}")));
            }
            Fault::MallTemplateIdNotDigits => {
                let id = mall
                    .get("templateId")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                set(mall, "templateId", json!(format!("T{id}")));
            }
            Fault::MallTagsNotStrings => set(mall, "tags", json!([1, 2])),
            Fault::CrossCityEntryIncomplete => set(
                mall,
                "crossCityPayments",
                json!([{"payToolCodeDesc": "支付宝", "status": 0, "statusDesc": "待开通"}]),
            ),
            Fault::CrossCityStatusBool => {
                set(
                    mall,
                    "crossCityPayments",
                    json!([{"payToolCode": 2, "payToolCodeDesc": "支付宝", "status": false, "statusDesc": "待开通"}]),
                );
            }
            Fault::SellerMerchantSnNull => set_in(mall, "seller", "merchantSn", Value::Null),
            Fault::SellerStoreIdMissing => {
                if let Some(Value::Object(seller)) = mall.get_mut("seller") {
                    seller.shift_remove("storeId");
                }
            }
            Fault::OrderTotalQuantityNotDecimal => {
                set_in(mall, "orderStatistics", "totalQuantity", json!("12件"));
            }
            Fault::OrderTotalNumString => {
                let n = mall
                    .get("orderStatistics")
                    .and_then(|o| o.get("totalNum"))
                    .map(Value::to_string);
                set_in(
                    mall,
                    "orderStatistics",
                    "totalNum",
                    json!(n.unwrap_or_default()),
                );
            }
            Fault::OrderTotalAmountFraction => {
                set_in(mall, "orderStatistics", "totalAmount", json!(12.5));
            }
            Fault::SellerStatisticsWrongShape => {
                set(mall, "sellerStatisticsModel", json!({"orderFailNum": "3"}));
            }
            Fault::ExtraFields => {
                set(
                    mall,
                    "mallLogoUrl",
                    json!("https://img.example.com/logo.png"),
                );
                for key in ["seller", "orderStatistics", "sellerStatisticsModel"] {
                    if let Some(Value::Object(inner)) = mall.get_mut(key) {
                        inner.insert("extraNote".into(), json!("附加字段"));
                    }
                }
                if let Some(Value::Array(payments)) = mall.get_mut("crossCityPayments") {
                    for p in payments.iter_mut().filter_map(Value::as_object_mut) {
                        p.insert("extraNote".into(), json!("附加字段"));
                    }
                }
            }
            Fault::UnknownTags => set(mall, "tags", json!(["bill", "vipOnly", "外卖"])),
            Fault::AppTypeOne => set(mall, "appType", json!(1)),
            Fault::StatusAsString => for_each_payment(mall, |p| {
                p.insert("status".into(), json!("0"));
            }),
            Fault::AlwaysNullWithValues => {
                for (i, field) in ALWAYS_NULL_FIELDS.iter().enumerate() {
                    set(mall, field, always_null_value(i));
                }
            }
            Fault::CrossCityOtherStatus => {
                set(mall, "crossCityPaymentStatus", json!(1));
                set(mall, "crossCityPaymentStatusDesc", json!("已开通"));
                for_each_payment(mall, |p| {
                    p.insert("status".into(), json!(1));
                    p.insert("statusDesc".into(), json!("已开通"));
                });
            }
            Fault::BigIntegers => {
                set_in(
                    mall,
                    "orderStatistics",
                    "totalNum",
                    json!(9_007_199_254_740_993_u64),
                );
                set_in(mall, "orderStatistics", "totalAmount", json!(i64::MAX));
            }
            Fault::OrderTotalNumBelowLong => {
                // Written as the integer literal by `wire::json_response`.
                set_in(mall, "orderStatistics", "totalNum", json!(BELOW_LONG_FLOAT));
            }
            Fault::LongMin => {
                set_in(mall, "orderStatistics", "totalNum", json!(i64::MIN));
                set_in(mall, "orderStatistics", "totalAmount", json!(i64::MIN));
            }
            Fault::NullableSellerFieldsNull => {
                set_in(mall, "seller", "storeName", Value::Null);
                set_in(mall, "seller", "crossCityTerminalSn", Value::Null);
            }
            Fault::EmptyCrossCityPayments => set(mall, "crossCityPayments", json!([])),
            _ => self.mutate_mall_spelling(mall),
        }
    }

    /// Rewrites one rendered product and its SKUs (spec §2.7, §2.8) as this fault breaks or
    /// varies it.
    pub(crate) fn mutate_product(self, product: &mut Map<String, Value>) {
        match self {
            Fault::ProductSpuIdNotDigits => {
                let id = product
                    .get("spuId")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                set(product, "spuId", json!(format!("SPU{id}")));
            }
            Fault::ProductCoverImagesNotArray => set(product, "converImages", Value::Null),
            Fault::ProductTitleMissing => {
                product.shift_remove("title");
            }
            Fault::ProductIntroNotJson => {
                set(
                    product,
                    "productIntroduction",
                    json!("<p>精选食材，现点现做。</p>"),
                );
            }
            Fault::ProductIntroNotString => {
                let text = product.get("productIntroduction").and_then(Value::as_str);
                let blocks = text
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    .unwrap_or_else(|| json!([]));
                set(product, "productIntroduction", blocks);
            }
            Fault::ProductIntroUnknownBlock => {
                let blocks = json!([
                    {"text": "精选食材", "type": "text"},
                    {"type": "video", "url": "https://video.example.com/1.mp4"},
                ]);
                set(product, "productIntroduction", json!(blocks.to_string()));
            }
            Fault::ProductIntroIncompleteBlock => {
                let blocks = json!([{"text": "精选食材", "type": "text"}, {"type": "bigImg"}]);
                set(product, "productIntroduction", json!(blocks.to_string()));
            }
            Fault::ExtraFields => set(product, "extraInfo", json!({"source": "mallcheck"})),
            _ => {}
        }
        if let Some(Value::Array(skus)) = product.get_mut("skuResults") {
            for sku in skus.iter_mut().filter_map(Value::as_object_mut) {
                self.mutate_sku(sku);
            }
        }
    }

    fn mutate_sku(self, sku: &mut Map<String, Value>) {
        match self {
            Fault::SkuIdNotDigits => {
                let id = sku.get("skuId").and_then(Value::as_str).unwrap_or_default();
                set(sku, "skuId", json!(format!("SKU{id}")));
            }
            Fault::SkuNameNumber => set(sku, "skuName", json!(42)),
            Fault::SkuPriceString => {
                let price = sku.get("price").map(Value::to_string).unwrap_or_default();
                set(sku, "price", json!(price));
            }
            Fault::SkuQuantityMissing => {
                sku.shift_remove("quantity");
            }
            Fault::ExtraFields => set(sku, "barcode", json!("6901234567890")),
            _ => self.mutate_sku_spelling(sku),
        }
    }
}

// ---- Number spellings and parsing faults (kept apart from the others to ease merging).

/// What `order-total-num-exponent` puts in the data; the wire writes it as [`EXPONENT_LITERAL`].
const EXPONENT_FLOAT: f64 = 100_000.0;
/// The exponent literal of `order-total-num-exponent`.
const EXPONENT_LITERAL: &str = "1e5";
/// What `order-total-num-huge` and `order-total-amount-digits` put in the data; the wire
/// writes them as `1e999` and as ten thousand digits.
const HUGE_FLOAT: f64 = -0.125;
const DIGITS_FLOAT: f64 = -0.375;

impl Fault {
    /// The values of the spelling faults: floats, which serde_json writes with a fraction.
    fn mutate_mall_spelling(self, mall: &mut Map<String, Value>) {
        match self {
            Fault::OrderTotalNumFloat => {
                set_in(mall, "orderStatistics", "totalNum", json!(105_112.0));
            }
            Fault::OrderTotalNumExponent => {
                set_in(mall, "orderStatistics", "totalNum", json!(EXPONENT_FLOAT));
            }
            Fault::MallStateFloat => set(mall, "state", json!(1.0)),
            Fault::OrderTotalNumHuge => {
                set_in(mall, "orderStatistics", "totalNum", json!(HUGE_FLOAT));
            }
            Fault::OrderTotalAmountDigits => {
                set_in(mall, "orderStatistics", "totalAmount", json!(DIGITS_FLOAT));
            }
            _ => {}
        }
    }

    fn mutate_sku_spelling(self, sku: &mut Map<String, Value>) {
        if self == Fault::SkuPriceFloat {
            set(sku, "price", json!(3800.0));
        }
    }

    /// The encoded JSON answer as the spelling faults write it (what a `Value` cannot hold).
    pub(crate) fn respell(self, bytes: Vec<u8>) -> Vec<u8> {
        let replace = |from: &str, to: &str| {
            let text = String::from_utf8_lossy(&bytes).replace(from, to);
            text.into_bytes()
        };
        let float = |f: f64| serde_json::to_string(&f).unwrap_or_default();
        match self {
            Fault::DuplicateMerchantId => replace(
                "\"seller\":{",
                &format!(
                    "\"seller\":{{\"merchantId\":\"{}\",",
                    crate::server::data::OTHER.merchant_id
                ),
            ),
            Fault::DuplicateData => {
                let text = String::from_utf8_lossy(&bytes);
                text.replacen("\"data\":[", "\"data\":[],\"data\":[", 1)
                    .into_bytes()
            }
            Fault::OrderTotalNumHuge => replace(
                &format!("\"totalNum\":{}", float(HUGE_FLOAT)),
                "\"totalNum\":1e999",
            ),
            Fault::OrderTotalAmountDigits => replace(
                &format!("\"totalAmount\":{}", float(DIGITS_FLOAT)),
                &format!("\"totalAmount\":9{}", "0".repeat(9_999)),
            ),
            Fault::OrderTotalNumExponent => {
                let float = serde_json::to_string(&EXPONENT_FLOAT).unwrap_or_default();
                replace(
                    &format!("\"totalNum\":{float}"),
                    &format!("\"totalNum\":{EXPONENT_LITERAL}"),
                )
            }
            _ => bytes,
        }
    }
}

// ---- Triggers of the faults of real stacks (issue 22), apart from the others.

impl Fault {
    /// The bytes this fault checks the signature over: the parsed body serialized again under
    /// `auth-signature-over-reserialized-json` (as `JSON.stringify(parsedBody)` does; a body
    /// that is not JSON stays as it is), else the raw bytes.
    pub(crate) fn signed_bytes(fault: Option<Fault>, raw: &[u8]) -> std::borrow::Cow<'_, [u8]> {
        if fault == Some(Fault::AuthSignatureOverReserializedJson)
            && let Ok(parsed) = serde_json::from_slice::<Value>(raw)
        {
            return std::borrow::Cow::Owned(serde_json::to_vec(&parsed).unwrap_or_default());
        }
        std::borrow::Cow::Borrowed(raw)
    }

    /// Whether this fault crashes (HTTP 500, connection dropped) on this raw request body:
    /// `fuzz-odd-json-crash-closes` on what a stock FastAPI service cannot echo in its 422:
    /// NaN or Infinity (not JSON), a number out of range, a lone surrogate.
    pub(crate) fn crashes_on(self, body: &[u8]) -> bool {
        if self != Fault::FuzzOddJsonCrashCloses {
            return false;
        }
        let Err(e) = serde_json::from_slice::<Value>(body) else {
            return false;
        };
        let token = |t: &[u8]| body.windows(t.len()).any(|w| w == t);
        let why = e.to_string();
        token(b"NaN")
            || token(b"Infinity")
            || why.contains("number out of range")
            || why.contains("surrogate")
            || why.contains("end of hex escape")
    }
}

/// Prefix the `mall-sn-not-digits` fault puts before every mallSn; the server strips it again
/// from cursors and products requests so that the rest of the interface keeps working.
pub(crate) const MALL_SN_PREFIX: &str = "MS";

fn set(map: &mut Map<String, Value>, key: &str, value: Value) {
    map.insert(key.to_string(), value);
}

fn set_in(map: &mut Map<String, Value>, outer: &str, key: &str, value: Value) {
    if let Some(Value::Object(inner)) = map.get_mut(outer) {
        inner.insert(key.to_string(), value);
    }
}

fn for_each_payment(mall: &mut Map<String, Value>, mut f: impl FnMut(&mut Map<String, Value>)) {
    if let Some(Value::Array(payments)) = mall.get_mut("crossCityPayments") {
        payments
            .iter_mut()
            .filter_map(Value::as_object_mut)
            .for_each(&mut f);
    }
}

/// A value of varied type for the `i`-th always-null field.
fn always_null_value(i: usize) -> Value {
    match i % 5 {
        0 => json!(["none"]),
        1 => json!(true),
        2 => json!({"reason": "示例"}),
        3 => json!("2024-01-01 00:00:00"),
        _ => json!(i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::catalog;
    use std::collections::HashSet;

    #[test]
    fn every_expected_check_is_in_the_catalogue() {
        for f in Fault::all() {
            if let Some(id) = f.expected_check() {
                assert!(
                    catalog::find(id).is_some(),
                    "{}: unknown check {id}",
                    f.name()
                );
            }
        }
    }

    #[test]
    fn names_are_unique_kebab_case_and_round_trip() {
        let mut seen = HashSet::new();
        for &f in Fault::all() {
            assert!(seen.insert(f.name()), "duplicate name {}", f.name());
            assert!(
                f.name()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            );
            assert_eq!(Fault::from_name(f.name()), Some(f));
            assert!(!f.description().is_empty());
        }
        assert_eq!(Fault::from_name("no-such-fault"), None);
    }

    #[test]
    fn there_are_enough_faults_variations_and_fuzz_triggers() {
        let contract = Fault::all()
            .iter()
            .filter(|f| f.expected_check().is_some() && !f.is_fuzz_trigger());
        assert!(contract.count() >= 40);
        assert!(
            Fault::all()
                .iter()
                .filter(|f| f.expected_check().is_none())
                .count()
                >= 10
        );
        let fuzz: Vec<_> = Fault::all()
            .iter()
            .filter(|f| f.is_fuzz_trigger())
            .collect();
        assert_eq!(fuzz.len(), 10);
        for f in fuzz {
            let id = f.expected_check();
            assert!(
                [
                    FUZZ_NO_SERVER_ERROR.id,
                    FUZZ_TIMELY.id,
                    FUZZ_OWNERSHIP.id,
                    FUZZ_CONTRACT.id
                ]
                .map(Some)
                .contains(&id)
            );
        }
    }

    #[test]
    fn every_contract_check_family_has_a_fault() {
        let caught: HashSet<&str> = Fault::all()
            .iter()
            .filter_map(|f| f.expected_check())
            .collect();
        for check in [
            &MALL_FIELDS,
            &MALL_STATE,
            &MALL_SELLER,
            &PRODUCT_INTRODUCTION,
            &PAGING_ENDLESS,
            &PAGING_REPEATABLE,
            &TRANSPORT_TIMEOUT,
            &RESPONSE_JSON,
        ] {
            assert!(caught.contains(check.id), "no fault for {}", check.id);
        }
    }

    #[test]
    fn mall_mutation_breaks_one_field() {
        let mut mall = Map::new();
        mall.insert("state".into(), json!(1));
        mall.insert("mallName".into(), json!("店"));
        Fault::MallStateOutOfRange.mutate_mall(&mut mall);
        assert_eq!(mall["state"], json!(3));
        assert_eq!(mall["mallName"], json!("店"));
        Fault::MallNameMissing.mutate_mall(&mut mall);
        assert!(!mall.contains_key("mallName"));
    }

    #[test]
    fn product_mutation_reaches_skus() {
        let mut p = json!({"spuId": "90003", "skuResults": [{"skuId": "900030", "price": 100}]});
        let map = p.as_object_mut().unwrap();
        Fault::SkuPriceString.mutate_product(map);
        assert_eq!(p["skuResults"][0]["price"], json!("100"));
    }

    #[test]
    fn echo_carries_the_request_in_every_form() {
        let echo = Echo::new(
            vec![("authorization".into(), "app s1gnature".into())],
            br#"{"appid":"app"}"#,
        );
        let mut envelope = json!({"success": true, "data": []});
        echo.attach(&mut envelope);
        let first = envelope.as_object().unwrap().keys().next().cloned();
        assert_eq!(
            first.as_deref(),
            Some("echo"),
            "first, inside the kept excerpt"
        );
        assert_eq!(
            envelope["echo"]["headers"]["authorization"],
            "app s1gnature"
        );
        assert_eq!(envelope["echo"]["body"], r#"{"appid":"app"}"#);
        assert_eq!(
            envelope["echo"]["authorizationBase64"],
            STANDARD.encode("app s1gnature")
        );
        let mut products = json!([{"spuId": "1"}, {"spuId": "2"}]);
        echo.attach(&mut products);
        assert_eq!(products[1]["echo"]["body"], r#"{"appid":"app"}"#);
        let headers = echo.response_headers();
        assert!(headers.contains(&("x-echo-authorization".into(), "app s1gnature".into())));
        assert!(
            headers
                .iter()
                .any(|(k, v)| k == "x-echo-request" && v.contains("s1gnature"))
        );
        assert!(echo.error_page().contains("Authorization: app s1gnature"));
    }

    #[test]
    fn odd_json_crashes_only_its_fault_and_only_on_odd_json() {
        let f = Fault::FuzzOddJsonCrashCloses;
        for odd in [
            r#"{"count":NaN}"#,
            r#"{"count":-Infinity}"#,
            r#"{"count":1e999}"#,
            r#"{"role":"\ud800"}"#,
        ] {
            assert!(f.crashes_on(odd.as_bytes()), "{odd}");
            assert!(!Fault::Gzip.crashes_on(odd.as_bytes()), "{odd}");
        }
        for fine in [r#"{"role":"NaN"}"#, "{", r#"{"count":1e308}"#, "not json"] {
            assert!(!f.crashes_on(fine.as_bytes()), "{fine}");
        }
    }

    #[test]
    fn intro_not_string_keeps_the_blocks() {
        let mut p = json!({"productIntroduction": "[{\"text\":\"a\",\"type\":\"text\"}]"});
        Fault::ProductIntroNotString.mutate_product(p.as_object_mut().unwrap());
        assert_eq!(
            p["productIntroduction"],
            json!([{"text": "a", "type": "text"}])
        );
    }
}
