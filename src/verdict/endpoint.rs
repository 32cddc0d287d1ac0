//! The two operations of the interface and how a request to them is authorised.

/// The page size of the spec's example `cursor.count` (§4.1), the only figure §8 gives: the one
/// size a service must serve.
pub const EXAMPLE_PAGE_SIZE: u64 = 10;

/// The two operations of spec §4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `POST /optimus/core/open/mall/queryMallList` (§4.1).
    MallList,
    /// `POST /optimus/core/open/mall/queryMallProducts` (§4.2).
    MallProducts,
}

impl Endpoint {
    /// Path appended to the base URL.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::MallList => "/optimus/core/open/mall/queryMallList",
            Endpoint::MallProducts => "/optimus/core/open/mall/queryMallProducts",
        }
    }

    /// Name used in case files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::MallList => "mall-list",
            Endpoint::MallProducts => "mall-products",
        }
    }

    /// Response schema checked by default.
    pub fn response_schema(self) -> &'static str {
        match self {
            Endpoint::MallList => "mall-list-response",
            Endpoint::MallProducts => "products-response",
        }
    }
}

/// How the `Authorization` header is built for a request (spec §5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthMode {
    /// Signed with the configured signer, appid taken from the body (the normal call).
    Signed,
    /// No Authorization header at all.
    Missing,
    /// The right appid with a signature that cannot be valid.
    WrongSignature,
    /// The valid signature with its middle character changed: a service that compares only
    /// part of it (the first or the last characters) serves it.
    AlteredSignature,
    /// The valid signature without its last character: a service that accepts any prefix of
    /// the signature (a `startsWith` the wrong way round) serves it.
    TruncatedSignature,
    /// The valid signature with one character more at its end: a service that checks only
    /// that the given signature begins with the valid one (`given.startsWith(valid)`) serves
    /// it.
    ExtendedSignature,
    /// Signed by the configured algorithm without the key (md5 of the body alone, HMAC under
    /// an empty key): a service that leaves the key out of its check serves it.
    UnkeyedSignature,
    /// The appid alone, without the signature part (`Authorization: <appid>`): a service that
    /// checks a signature only when one is given serves it.
    EmptySignature,
    /// An `Authorization` header with an empty value: a service that checks only whether the
    /// header is there serves it.
    EmptyAuthorization,
    /// Signed correctly but with an appid different from the body's.
    AppidMismatch,
    /// An appid the service does not know with a signature that cannot be valid: a service
    /// that checks the signature only of the appids it knows serves it.
    UnknownAppid,
    /// The valid signature of another body of the same operation, sent just before (a replay).
    SignatureOfOtherBody,
    /// The valid signature of a request to the other operation, sent just before (a replay).
    SignatureOfOtherOperation,
    /// Signed correctly, the body being the same JSON in another spelling (whitespace, key
    /// order, escaped characters; see `service::spelling`): the signature covers raw bytes.
    SignedOtherSpelling,
}

impl AuthMode {
    /// Whether the mode moves a valid signature from another request onto this one.
    pub fn is_replay(&self) -> bool {
        matches!(
            self,
            AuthMode::SignatureOfOtherBody | AuthMode::SignatureOfOtherOperation
        )
    }
}

impl Endpoint {
    /// The other operation of the interface.
    pub fn other(self) -> Endpoint {
        match self {
            Endpoint::MallList => Endpoint::MallProducts,
            Endpoint::MallProducts => Endpoint::MallList,
        }
    }
}
