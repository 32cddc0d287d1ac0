//! Which HTTP proxy carries the requests to a base URL, as curl, reqwest and Hurl decide it:
//! the proxy given (`--proxy`, `MALLCHECK_PROXY`, a profile's `proxy`), else the environment's
//! (`http_proxy` / `HTTP_PROXY` for an `http://` target, `https_proxy` / `HTTPS_PROXY` for
//! `https://`, `ALL_PROXY` for both), neither for a host in `NO_PROXY`. The environment's is
//! never used for a loopback host (a CI job's proxy is for the outside world, not for a
//! service it started itself); `none` turns proxies off.

use std::collections::BTreeMap;

use hyper_util::client::proxy::matcher::Matcher;

/// The environment variables of proxies, as curl reads them.
pub const VARS: [&str; 8] = [
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
];

/// The value that turns proxies off.
pub const NONE: &str = "none";

/// The first of `names` set (non-empty) in `env`.
fn first<'a>(env: &'a BTreeMap<String, String>, names: &[&str]) -> &'a str {
    names
        .iter()
        .find_map(|n| env.get(*n).filter(|v| !v.trim().is_empty()))
        .map_or("", |v| v.trim())
}

/// A proxy as given, with `http://` put in front of one written without a scheme (as curl
/// does), checked (an `http` or `https` URL with a host and nothing after it but a `/`) and
/// written as the URL parser writes it (a space in a password percent-encoded). An error never
/// quotes the value: it may hold a password that no parser could find in it.
pub fn parse(given: &str) -> Result<String, String> {
    let given = given.trim();
    let text = if given.contains("://") {
        given.to_string()
    } else {
        format!("http://{given}")
    };
    let url = url::Url::parse(&text).map_err(|e| format!("not a proxy URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "not a proxy URL: proxies are http:// or https:// (or `{NONE}`), not {}://",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty)
        || !matches!(url.path(), "" | "/")
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err(
            "not a proxy URL: a proxy is a scheme, a host and a port, nothing more".to_string(),
        );
    }
    let mut written = url.to_string();
    if written.ends_with('/') {
        written.pop();
    }
    Ok(written)
}

/// Whether the host of `base_url` is this machine (`localhost` and its subdomains, with or
/// without the final dot; `127.0.0.0/8` in any form the URL parser reads, such as
/// `2130706433`; `::1`).
fn is_loopback(base_url: &str) -> bool {
    let Ok(url) = url::Url::parse(base_url) else {
        return false;
    };
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        None => false,
    }
}

/// Whether `NO_PROXY` (`no`) sends the requests to `uri` directly.
fn excluded(uri: &http::Uri, no: &str) -> bool {
    let probe = Matcher::builder()
        .all("http://proxy.invalid:1")
        .no(no)
        .build();
    probe.intercept(uri).is_none()
}

/// The proxy of the requests to `base_url`: `given` (already [`parse`]d, or `none`), else the
/// environment's `env` (the variables of [`VARS`] that are set); `Ok(None)` sends them
/// directly. An environment proxy that is no proxy URL is an error naming its variable (curl
/// refuses it too), but only when it would apply.
pub fn route(
    base_url: &str,
    given: Option<&str>,
    env: &BTreeMap<String, String>,
) -> Result<Option<String>, (&'static str, String)> {
    let Ok(uri) = base_url.parse::<http::Uri>() else {
        return Ok(None);
    };
    let no = first(env, &["no_proxy", "NO_PROXY"]);
    if uri.host().is_none_or(str::is_empty) || excluded(&uri, no) {
        return Ok(None);
    }
    match given {
        Some(NONE) => Ok(None),
        Some(proxy) => Ok(Some(proxy.to_string())),
        None if is_loopback(base_url) => Ok(None),
        None => {
            let names = if uri.scheme_str() == Some("https") {
                ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
            } else {
                ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
            };
            let Some(name) = names
                .iter()
                .find(|n| env.get(**n).is_some_and(|v| !v.trim().is_empty()))
            else {
                return Ok(None);
            };
            parse(&env[*name]).map(Some).map_err(|e| (*name, e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn the_environment_proxy_of_the_target_scheme_applies_unless_no_proxy_or_loopback() {
        let e = env(&[
            ("HTTP_PROXY", "http://p.corp:3128"),
            ("https_proxy", "p2.corp:8080"),
            ("NO_PROXY", "internal.corp, 10.0.0.0/8"),
        ]);
        let r = |url: &str| route(url, None, &e).unwrap();
        assert_eq!(
            r("http://s.example/x").as_deref(),
            Some("http://p.corp:3128")
        );
        assert_eq!(
            r("https://s.example").as_deref(),
            Some("http://p2.corp:8080")
        );
        assert_eq!(r("http://api.internal.corp"), None);
        assert_eq!(r("http://10.1.2.3:8080"), None);
        for local in [
            "http://127.0.0.1:8080",
            "http://localhost:1",
            "http://[::1]:80",
        ] {
            assert_eq!(r(local), None, "{local}");
        }
        assert_eq!(route("http://s.example", None, &env(&[])).unwrap(), None);
        let all = env(&[("ALL_PROXY", "http://a.corp:1")]);
        assert_eq!(
            route("https://s.example", None, &all).unwrap().as_deref(),
            Some("http://a.corp:1")
        );
        // An unusable variable is named, where it would apply only.
        let bad = env(&[("HTTP_PROXY", "socks5://x:1")]);
        assert_eq!(
            route("http://s.example", None, &bad).unwrap_err().0,
            "HTTP_PROXY"
        );
        assert_eq!(route("http://127.0.0.1:1", None, &bad).unwrap(), None);
        let excluded = env(&[("http_proxy", "::bad"), ("NO_PROXY", "*")]);
        assert_eq!(route("http://s.example", None, &excluded).unwrap(), None);
    }

    #[test]
    fn a_given_proxy_applies_to_loopback_too_and_none_turns_every_proxy_off() {
        let e = env(&[
            ("HTTP_PROXY", "http://p.corp:3128"),
            ("NO_PROXY", "skip.example"),
        ]);
        let given = Some("http://u:pw@given:9");
        assert_eq!(
            route("http://127.0.0.1:8080", given, &e)
                .unwrap()
                .as_deref(),
            Some("http://u:pw@given:9")
        );
        assert_eq!(route("http://skip.example", given, &e).unwrap(), None);
        assert_eq!(route("http://s.example", Some(NONE), &e).unwrap(), None);
    }

    #[test]
    fn a_proxy_without_a_scheme_is_http_and_a_url_with_more_is_refused() {
        assert_eq!(parse("p.corp:3128").unwrap(), "http://p.corp:3128");
        // A space in a password is written as the parser writes it, not dropped.
        assert_eq!(
            parse("http://a:pass word@p:1").unwrap(),
            "http://a:pass%20word@p:1"
        );
        assert_eq!(parse("https://p.corp").unwrap(), "https://p.corp");
        for bad in [
            "socks5://p:1",
            "http://p:1/path",
            "http://",
            "http://p:1?q=1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        // A refused proxy is not quoted: it may hold a password no parser finds.
        for bad in [
            "ftp://user:secret@p:1",
            "user:secret garbage",
            "http://u:secret@p:1/x",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(!e.contains("secret"), "{e}");
        }
    }
}
