//! Talking to the service under test: the signing HTTP client with its limits, politeness
//! (rate, retries), discovery of a mall to target, and sending a case's request.

pub mod client;
pub mod discover;
pub mod lazy_json;
pub mod politeness;
pub mod proxy_route;
pub mod read_memo;
pub mod replay;
pub mod request;
pub mod spelling;
pub mod transport;
pub mod transport_words;
