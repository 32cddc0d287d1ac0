//! Line (d): the peak memory of receiving and checking the 5,000-product response, measured in
//! a child process (`mallcheck bench --memory-probe URL`) so nothing else of the bench counts.
//! The probe receives and checks the body as a run's products sweep does: the client keeps the
//! bytes and checks they are JSON without building a tree, and the check reads the records one
//! at a time from the bytes.

use std::process::Command as Process;
use std::time::Duration;

use serde_json::json;

use crate::bench::child::{mallcheck_exe, run_child};
use crate::bench::measure::{Goal, Measurement, mib};
use crate::checks::products;
use crate::exit;
use crate::redact::Redactor;
use crate::server::data::{Dataset, MAIN, Shape};
use crate::service::client::Client;
use crate::settings::Settings;
use crate::spec::schemas::{MAX_FINDINGS, SchemaSet};
use crate::verdict::endpoint::{AuthMode, Endpoint};
use crate::verdict::findings::Findings;

/// (d) Peak memory added while receiving and checking a body over the body's size.
pub(crate) const MEMORY_TARGET: Goal = Goal::AtMost(4.0);
/// Prefix of the memory probe's one line of output.
const PROBE_PREFIX: &str = "memory-probe";

/// A `kB` field of /proc/self/status, in bytes.
pub fn status_bytes(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

pub(crate) fn own_status(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status_bytes(&status, field)
}

/// The child of line (d): fetches the 5,000-product response (the big-mall variation) from
/// `base_url` through the runner's client, checks it as a run does and prints its memory.
pub async fn probe(
    base_url: &str,
    target: &Settings,
    schemas: &SchemaSet,
    redactor: &Redactor,
) -> i32 {
    let fail = |what: String| {
        crate::say::stdout_line!("{PROBE_PREFIX} error {what}");
        exit::FAILURE
    };
    let client = match Client::new(
        &format!("{base_url}/fault/big-mall"),
        target.signer.clone(),
        target.client.clone(),
        redactor,
    ) {
        Ok(c) => c,
        Err(e) => return fail(e.to_string()),
    };
    let mall = Dataset::new(Shape::BigMall)
        .malls_of(MAIN.merchant_id)
        .first()
        .map(|m| (m.mall_sn.clone(), m.signature.clone()));
    let Some((sn, sig)) = mall else {
        return fail("the big-mall data has no mall".to_string());
    };
    let body = json!({
        "appid": target.identity.appid,
        "seller": {
            "merchantId": MAIN.merchant_id,
            "merchantUserId": MAIN.merchant_user_id,
            "role": MAIN.role,
        },
        "mallID": {"mallSn": sn, "signature": sig},
    });
    let line = async {
        // Warm up the pool, the runtime and the schemas' lazy parts on a small response.
        let warm = client
            .send_json(
                Endpoint::MallList,
                &target.first_page_body(10),
                &AuthMode::Signed,
                &[],
            )
            .await;
        if let Ok(r) = &warm.result {
            let _ = schemas.validate("mall-list-response", &r.json);
            let _ = schemas.extra_fields("mall-list-response", &r.json);
        }
        drop(warm);
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let baseline = own_status("VmRSS").unwrap_or(0);
        let sent = client
            .send_json(Endpoint::MallProducts, &body, &AuthMode::Signed, &[])
            .await;
        let received = own_status("VmHWM").unwrap_or(0);
        let response = match sent.result {
            Ok(r) => r,
            Err(f) => return format!("{PROBE_PREFIX} error {}", f.actual),
        };
        // As the products sweep of a run does: record by record from the bytes, keeping the
        // spuIds for the order and distinctness checks; no tree of the body is built.
        let mut found = Findings::new(MAX_FINDINGS);
        let mut spu_ids = Vec::new();
        let streamed = crate::cpu::cpu_bound(usize::MAX, || {
            let mut each = |_: usize, p: &serde_json::Value| spu_ids.extend(products::spu_id(p));
            schemas.check_bytes_into("products-response", &response.body, &mut found, &mut each)
        });
        if let Err(e) = streamed {
            return format!("{PROBE_PREFIX} error {e}");
        }
        let findings = found.total() + products::order_of_ids(&spu_ids).len();
        let ids = spu_ids.len();
        let peak = own_status("VmHWM").unwrap_or(0);
        format!(
            "{PROBE_PREFIX} body={} products={ids} findings={findings} baseline={baseline} received={received} peak={peak} reset={reset}",
            response.body.len()
        )
    }
    .await;
    crate::say::stdout_line!("{line}");
    exit::PASS
}

/// The figures the memory probe prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeFigures {
    /// Response body size in bytes.
    pub body: u64,
    /// Products in the response.
    pub products: u64,
    /// RSS before the request.
    pub baseline: u64,
    /// Peak RSS once the body was received and parsed.
    pub received: u64,
    /// Peak RSS once the checks ran.
    pub peak: u64,
    /// Whether the peak could be reset before the request.
    pub reset: bool,
}

/// Reads the memory probe's line.
pub fn parse_probe(stdout: &str) -> Result<ProbeFigures, String> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(PROBE_PREFIX))
        .ok_or_else(|| "the memory probe printed nothing".to_string())?;
    if let Some(e) = line.strip_prefix(&format!("{PROBE_PREFIX} error ")) {
        return Err(format!("the memory probe failed: {e}"));
    }
    let field = |name: &str| -> Option<&str> {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    };
    let num = |name: &str| -> Result<u64, String> {
        field(name)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("the memory probe's line lacks {name}: {line}"))
    };
    Ok(ProbeFigures {
        body: num("body")?,
        products: num("products")?,
        baseline: num("baseline")?,
        received: num("received")?,
        peak: num("peak")?,
        reset: field("reset") == Some("true"),
    })
}

pub(crate) fn memory(base_url: &str) -> impl FnOnce() -> Result<Measurement, String> {
    let base_url = base_url.to_string();
    move || {
        let exe = mallcheck_exe()?;
        let mut command = Process::new(exe);
        command.args(["bench", "--memory-probe", &base_url]);
        let (code, stdout, stderr) = run_child(command, Duration::from_secs(60))?;
        let figures = parse_probe(&stdout).map_err(|e| {
            let err = stderr.lines().next().unwrap_or("").to_string();
            format!("{e} (exit {code}) {err}")
        })?;
        let added = figures.peak.saturating_sub(figures.baseline);
        let mut details = vec![format!(
            "RSS before the request {}; peak once received and parsed {} (+{}), once checked {} (+{})",
            mib(figures.baseline as f64),
            mib(figures.received as f64),
            mib(figures.received.saturating_sub(figures.baseline) as f64),
            mib(figures.peak as f64),
            mib(added as f64),
        )];
        if !figures.reset {
            details.push(
                "note: /proc/self/clear_refs could not reset the peak; it may predate the request"
                    .to_string(),
            );
        }
        Ok(Measurement {
            item: "(d) memory",
            figures: format!(
                "peak RSS added while receiving and checking the {}-product response: {} vs body {}",
                figures.products,
                mib(added as f64),
                mib(figures.body as f64)
            ),
            ratio: (figures.body > 0).then(|| added as f64 / figures.body as f64),
            goal: MEMORY_TARGET,
            details,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_are_read_in_bytes() {
        let status = "Name:\tmallcheck\nVmHWM:\t   2048 kB\nVmRSS:\t   1024 kB\n";
        assert_eq!(status_bytes(status, "VmHWM"), Some(2048 * 1024));
        assert_eq!(status_bytes(status, "VmRSS"), Some(1024 * 1024));
        assert_eq!(status_bytes(status, "VmSwap"), None);
        assert!(own_status("VmRSS").is_some_and(|b| b > 0));
    }

    #[test]
    fn probe_line_parses_and_errors_surface() {
        let ok = parse_probe(
            "memory-probe body=100 products=5 findings=0 baseline=10 received=20 peak=30 reset=true\n",
        )
        .unwrap();
        assert_eq!(
            (ok.body, ok.products, ok.peak, ok.reset),
            (100, 5, 30, true)
        );
        assert!(
            parse_probe("memory-probe error refused")
                .unwrap_err()
                .contains("refused")
        );
        assert!(parse_probe("").is_err());
    }
}
