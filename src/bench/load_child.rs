//! Line (b)'s load generator in a process of its own, as a load generator of the field (`oha`,
//! `wrk`) runs: the fuzz run it is compared with is a process of its own too, so both pay the
//! same price to reach the server (its wake-ups, the loopback between two processes). In the
//! bench's own process the generator shared the server's runtime and threads, which no client
//! of the field can.
//!
//! The parent writes the recorded requests to a file ([`encode`]), runs `mallcheck bench
//! --load-addr ADDR --load-requests FILE --jobs N --load-secs S`, and reads back one line
//! `answers N nanos T` and the child's CPU.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command as Process;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method};

use crate::bench::child::{mallcheck_exe, run_child};
use crate::bench::load::{self, Load};
use crate::bench::measure::{CpuUse, children_cpu};
use crate::bench::proxy::Recorded;
use crate::exit;

/// The requests as length-prefixed fields (little-endian `u32` lengths): method, path, the
/// number of headers, each header's name and value, the body.
pub(crate) fn encode(requests: &[Recorded]) -> Vec<u8> {
    let mut out = Vec::new();
    let field = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(bytes);
    };
    for r in requests {
        field(&mut out, r.method.as_str().as_bytes());
        field(&mut out, r.path.as_bytes());
        let count = u32::try_from(r.headers.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&count.to_le_bytes());
        for (name, value) in &r.headers {
            field(&mut out, name.as_str().as_bytes());
            field(&mut out, value.as_bytes());
        }
        field(&mut out, &r.body);
    }
    out
}

/// Reads what [`encode`] wrote.
pub(crate) fn decode(mut bytes: &[u8]) -> Result<Vec<Recorded>, String> {
    fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
        if bytes.len() < n {
            return Err("the requests file is cut short".to_string());
        }
        let (head, rest) = bytes.split_at(n);
        *bytes = rest;
        Ok(head)
    }
    fn count(bytes: &mut &[u8]) -> Result<usize, String> {
        let raw: [u8; 4] = take(bytes, 4)?.try_into().map_err(|_| "cut short")?;
        Ok(u32::from_le_bytes(raw) as usize)
    }
    fn field<'a>(bytes: &mut &'a [u8]) -> Result<&'a [u8], String> {
        let n = count(bytes)?;
        take(bytes, n)
    }
    let mut requests = Vec::new();
    while !bytes.is_empty() {
        let method = Method::from_bytes(field(&mut bytes)?).map_err(|e| e.to_string())?;
        let path = String::from_utf8(field(&mut bytes)?.to_vec()).map_err(|e| e.to_string())?;
        let mut headers = Vec::new();
        for _ in 0..count(&mut bytes)? {
            let name = HeaderName::from_bytes(field(&mut bytes)?).map_err(|e| e.to_string())?;
            let value = HeaderValue::from_bytes(field(&mut bytes)?).map_err(|e| e.to_string())?;
            headers.push((name, value));
        }
        let body = Bytes::copy_from_slice(field(&mut bytes)?);
        requests.push(Recorded {
            method,
            path,
            headers,
            body,
        });
    }
    Ok(requests)
}

/// The child's side: loads the requests, drives the load and prints `answers N nanos T`.
/// Exit 0, or 3 with the reason on stderr.
pub async fn child(addr: SocketAddr, file: &Path, connections: usize, time: Duration) -> i32 {
    let loaded = std::fs::read(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))
        .and_then(|bytes| decode(&bytes));
    let driven = match loaded {
        Ok(requests) => load::drive(addr, Arc::new(requests), connections, time).await,
        Err(e) => Err(e),
    };
    match driven {
        Ok(load) => {
            crate::say::stdout_line!("answers {} nanos {}", load.answers, load.took.as_nanos());
            exit::PASS
        }
        Err(e) => {
            crate::say::stderr_line!("the load generator failed: {e}");
            exit::COULD_NOT_TEST
        }
    }
}

/// The parent's side: runs the load generator in a child process against `addr` and returns
/// what it measured with the child's CPU.
pub(crate) async fn drive(
    addr: SocketAddr,
    requests: &[Recorded],
    connections: usize,
    time: Duration,
) -> Result<(Load, CpuUse), String> {
    let scratch = tempfile::tempdir().map_err(|e| format!("cannot make a temp dir: {e}"))?;
    let file = scratch.path().join("requests.bin");
    std::fs::write(&file, encode(requests))
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let mut command = Process::new(mallcheck_exe()?);
    command
        .arg("bench")
        .args(["--load-addr", &addr.to_string()])
        .arg("--load-requests")
        .arg(&file)
        .args(["--jobs", &connections.to_string()])
        .args(["--load-secs", &time.as_secs_f64().to_string()]);
    let limit = time + Duration::from_secs(60);
    let (code, stdout, stderr, cpu) = tokio::task::spawn_blocking(move || {
        // The bench waits for no other child meanwhile: the difference is this one's.
        let before = children_cpu();
        run_child(command, limit)
            .map(|(code, out, err)| (code, out, err, children_cpu().since(before)))
    })
    .await
    .map_err(|e| e.to_string())??;
    let parsed = stdout.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        let (Some("answers"), Some(n), Some("nanos"), Some(t)) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return None;
        };
        Some((n.parse::<u64>().ok()?, t.parse::<u64>().ok()?))
    });
    let Some((answers, nanos)) = parsed else {
        let why = stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output");
        return Err(format!(
            "the load generator's process ended with exit {code}: {why}"
        ));
    };
    Ok((
        Load {
            answers,
            took: Duration::from_nanos(nanos),
            connections,
        },
        cpu,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_read_back_as_they_were_written() {
        let requests = vec![
            Recorded {
                method: Method::POST,
                path: "/api/mall/list".to_string(),
                headers: vec![(
                    HeaderName::from_static("authorization"),
                    HeaderValue::from_bytes(b"app:\xffsig").expect("opaque bytes"),
                )],
                body: Bytes::from_static(b"{\"page\":1}"),
            },
            Recorded {
                method: Method::GET,
                path: "/x?y=1".to_string(),
                headers: vec![],
                body: Bytes::new(),
            },
        ];
        let back = decode(&encode(&requests)).expect("reads back");
        assert_eq!(back.len(), 2);
        for (a, b) in requests.iter().zip(&back) {
            assert_eq!(
                (&a.method, &a.path, &a.headers, &a.body),
                (&b.method, &b.path, &b.headers, &b.body)
            );
        }
        let bytes = encode(&requests);
        assert!(
            decode(&bytes[..bytes.len() - 1]).is_err(),
            "a cut file is an error"
        );
    }
}
