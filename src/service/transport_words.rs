//! Transport errors in words: the error chains of hyper and rustls carry Rust `Debug` names
//! (`Other(OtherError(CaUsedAsEndEntity))`) and resolver phrasing that a user should not have to
//! decode. Each known form is rewritten into a sentence that keeps the original name in
//! parentheses, so the text can still be searched for.

use std::sync::LazyLock;

use regex::Regex;

/// `Other(OtherError(Name))` or a bare certificate error name after "invalid peer certificate: ".
static CERTIFICATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"invalid peer certificate: (?:Other\(OtherError\((\w+)\)\)|(\w+)(?:\([^)]*\))?)")
        .expect("a valid pattern")
});

/// rustls's words for a certificate issued for another name (its `Display` of
/// `NotValidForNameContext`): the host asked for, and the names the certificate holds.
static WRONG_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"invalid peer certificate: certificate not valid for name "([^"]*)"(?:; certificate is only valid for ([^\n]*))?"#,
    )
    .expect("a valid pattern")
});

/// The resolver's words for a host name it could not resolve.
static DNS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"dns error: (?:error resolving DNS: )?failed to lookup address information: ([^:\n]+)",
    )
    .expect("a valid pattern")
});

/// What a rustls/webpki certificate error name means.
fn certificate_words(name: &str) -> String {
    let meaning = match name {
        "UnknownIssuer" => {
            "it is issued by a certificate authority this machine does not trust (self-signed, or a private CA: pass --cacert FILE)"
        }
        "CaUsedAsEndEntity" => {
            "the server presents a CA certificate as its own (basicConstraints CA:TRUE); it needs a certificate issued for the server by that CA"
        }
        "NotValidForName" | "NotValidForNameContext" => {
            "it is not issued for this host name (check the base URL's host)"
        }
        "Expired" | "ExpiredContext" => "it has expired",
        "NotValidYet" | "NotValidYetContext" => "it is not valid yet (check this machine's clock)",
        "BadSignature" => "its signature does not verify",
        "Revoked" => "it has been revoked",
        "BadEncoding" => "it is not a well-formed certificate",
        "UnsupportedSignatureAlgorithm" | "UnsupportedSignatureAlgorithmContext" => {
            "it is signed with an algorithm mallcheck does not support"
        }
        _ => return format!("the service's TLS certificate is not accepted ({name})"),
    };
    format!("the service's TLS certificate is not accepted: {meaning} ({name})")
}

/// `chain` in words: a certificate or resolver failure is told by one sentence alone (the URL
/// and the layers it went through are shown beside it already, and would push the cause past
/// the length a finding keeps); any other chain is returned as it is. `proxied`: the request
/// went through a proxy, whose host is then the one this machine resolves, and which opens
/// the tunnel of an `https` target.
pub fn in_words(chain: &str, proxied: bool) -> String {
    if let Some(c) = WRONG_NAME.captures(chain) {
        let host = c.get(1).map_or("", |m| m.as_str());
        let names = c.get(2).map_or(String::new(), |m| {
            let names = m
                .as_str()
                .replace("DnsName(", "")
                .replace("IpAddress(", "")
                .replace([')', '"', '[', ']'], "");
            format!(" (it is issued for {})", names.trim_end_matches(['.', ' ']))
        });
        return format!(
            "the service's TLS certificate is not accepted: it is not issued for the host name \
             {host:?} of the base URL{names} (NotValidForName)"
        );
    }
    if let Some(c) = CERTIFICATE.captures(chain) {
        let name = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
        return certificate_words(name);
    }
    if let Some(c) = DNS.captures(chain) {
        let check = if proxied {
            "check the proxy's host (--proxy, MALLCHECK_PROXY or the environment's HTTP(S)_PROXY)"
        } else {
            "check the base URL's host"
        };
        return format!(
            "the host name could not be resolved (DNS: {}): {check}",
            c[1].trim()
        );
    }
    // hyper-util's tunnel says only that the proxy's answer to CONNECT was no 2xx, or a 407.
    if proxied && chain.contains("tunnel error: unsuccessful") {
        return "the proxy refused a tunnel (CONNECT) to the service: a host or port it does not \
                allow? (tunnel error: unsuccessful)"
            .to_string();
    }
    if proxied && chain.contains("tunnel error: proxy authorization required") {
        return "the proxy wants credentials for a tunnel (407 to CONNECT): --proxy \
                http://user:password@host:port (tunnel error: proxy authorization required)"
            .to_string();
    }
    chain.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rustls_debug_names_become_words() {
        let text = in_words(
            "client error (Connect): invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))",
            false,
        );
        assert!(!text.contains("Other(OtherError"), "{text}");
        assert!(text.contains("CA certificate as its own"), "{text}");
        assert!(text.contains("(CaUsedAsEndEntity)"), "{text}");
        let text = in_words(
            "client error (Connect): invalid peer certificate: certificate not valid for name \"127.0.0.1\"; certificate is only valid for DnsName(\"other.example\")",
            false,
        );
        assert!(
            text.contains("not issued for the host name \"127.0.0.1\""),
            "{text}"
        );
        assert!(text.contains("it is issued for other.example"), "{text}");
        let text = in_words("invalid peer certificate: UnknownIssuer", false);
        assert!(text.contains("--cacert FILE"), "{text}");
        let text = in_words(
            "invalid peer certificate: NotValidForNameContext { expected: x }",
            false,
        );
        assert!(text.contains("not issued for this host name"), "{text}");
        let text = in_words("invalid peer certificate: SomethingNew", false);
        assert!(text.contains("not accepted (SomethingNew)"), "{text}");
    }

    #[test]
    fn a_resolver_failure_names_the_host_lookup() {
        let chain = "error sending request for url (http://x.invalid/p): client error (Connect): \
             dns error: error resolving DNS: failed to lookup address information: Name or \
             service not known";
        assert_eq!(
            in_words(chain, false),
            "the host name could not be resolved (DNS: Name or service not known): check the \
             base URL's host"
        );
        // Through a proxy, this machine resolves the proxy's host, not the service's.
        let text = in_words(chain, true);
        assert!(text.contains("check the proxy's host"), "{text}");
    }

    #[test]
    fn a_refused_tunnel_names_the_proxy() {
        let chain = "error sending request for url (https://x.example/p): client error \
                     (Connect): tunnel error: unsuccessful";
        let text = in_words(chain, true);
        assert!(text.contains("the proxy refused a tunnel"), "{text}");
        assert!(text.contains("(tunnel error: unsuccessful)"), "{text}");
        assert_eq!(in_words(chain, false), chain);
    }

    #[test]
    fn other_errors_are_left_as_they_are() {
        let e = "tcp connect error: Connection refused (os error 111)";
        assert_eq!(in_words(e, false), e);
    }
}
