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
/// does), checked: an `http` or `https` URL with a host and nothing after it but a `/`.
pub fn parse(given: &str) -> Result<String, String> {
    let given = given.trim();
    let text = if given.contains("://") {
        given.to_string()
    } else {
        format!("http://{given}")
    };
    let url = url::Url::parse(&text).map_err(|e| {
        format!(
            "`{}` is not a proxy URL ({e})",
            crate::redact::url_for_display(&text)
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "{}: proxies are http:// or https:// (or `{NONE}`)",
            crate::redact::url_for_display(&text)
        ));
    }
    if url.host_str().is_none_or(str::is_empty)
        || !matches!(url.path(), "" | "/")
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err(format!(
            "{}: a proxy is a scheme, a host and a port, nothing more",
            crate::redact::url_for_display(&text)
        ));
    }
    Ok(text)
}

/// Whether `host` is this machine (`localhost`, `127.0.0.0/8`, `::1`).
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
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
    let Some(host) = uri.host() else {
        return Ok(None);
    };
    let chosen = match given {
        Some(NONE) => return Ok(None),
        Some(proxy) => proxy.to_string(),
        None if is_loopback(host) => return Ok(None),
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
            parse(&env[*name]).map_err(|e| (*name, e))?
        }
    };
    let no = first(env, &["no_proxy", "NO_PROXY"]);
    let matcher = Matcher::builder().all(chosen.clone()).no(no).build();
    Ok(matcher.intercept(&uri).map(|_| chosen))
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
        assert_eq!(parse("https://p.corp").unwrap(), "https://p.corp");
        for bad in [
            "socks5://p:1",
            "http://p:1/path",
            "http://",
            "http://p:1?q=1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        // A password in a refused proxy is not shown.
        let e = parse("ftp://user:secret@p:1").unwrap_err();
        assert!(!e.contains("secret"), "{e}");
    }
}
