//! Shared helpers of the integration tests: the real binary, and `mallcheck serve` on an
//! ephemeral loopback port.

#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the helpers"
)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use mallcheck::server::data::{DEMO_APPID, DEMO_SIGN_KEY, MAIN, OTHER};

/// Path of the binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mallcheck"))
}

/// The repository root (for `cases/`).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A `mallcheck serve --port 0` process, killed on drop.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
}

impl Server {
    /// Starts the server and waits for its "listening on" line (no sleeping, no fixed port).
    pub fn start(extra: &[&str]) -> Server {
        let mut cmd = Command::new(bin());
        cmd.args(["serve", "--port", "0"]).args(extra);
        Server::spawn(cmd)
    }

    /// Starts `cmd`, a `mallcheck serve` command (possibly behind a wrapper such as `sh -c`),
    /// and waits for its "listening on" line.
    pub fn spawn(mut cmd: Command) -> Server {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mallcheck serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .expect("read the listening line");
        // Keep draining so the server never writes into a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let base_url = line
            .trim()
            .rsplit(' ')
            .next()
            .filter(|u| u.starts_with("http://"))
            .unwrap_or_else(|| panic!("unexpected first line from serve: {line:?}"))
            .to_string();
        Server { child, base_url }
    }

    /// The server's request counters (`GET /_mallcheck/requests`): `requests` answered so far
    /// and `max_in_flight`, the most handled at once.
    pub fn counters(&self) -> serde_json::Value {
        use std::io::{Read, Write};
        let addr = self.base_url.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(addr).expect("connect to the server");
        write!(
            stream,
            "GET /_mallcheck/requests HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        )
        .expect("send the counters request");
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .expect("read the counters");
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        serde_json::from_str(body).unwrap_or_else(|e| panic!("counters {body:?}: {e}"))
    }

    /// Base URL serving one fault by path prefix.
    pub fn fault_url(&self, fault: &str) -> String {
        format!("{}/fault/{fault}", self.base_url)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `mallcheck run` against `base_url` as the embedded server's main merchant, in `dir`, with a
/// clean environment (the demo key only): callers add the cases and reports.
pub fn run_as_main(base_url: &str, dir: &Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .args(["run", "--base-url", base_url])
        .args(["--appid", DEMO_APPID, "--merchant-id", MAIN.merchant_id])
        .args(["--merchant-user-id", MAIN.merchant_user_id]);
    cmd
}

/// `mallcheck fuzz --seed SEED` against `base_url` as the reference server's main merchant (and
/// its other merchant), in `dir` with a clean environment; the JUnit report and the
/// regressions land in `dir` (`junit.xml`, `regs/`).
pub fn fuzz_as_main(base_url: &str, dir: &Path, seed: &str) -> Command {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MALLCHECK_SIGN_KEY", DEMO_SIGN_KEY)
        .env("MALLCHECK_OTHER_MERCHANT_ID", OTHER.merchant_id)
        .env("MALLCHECK_OTHER_MERCHANT_USER_ID", OTHER.merchant_user_id)
        .args([
            "fuzz",
            "--seed",
            seed,
            "--color",
            "never",
            "--base-url",
            base_url,
        ])
        .args(["--appid", DEMO_APPID, "--merchant-id", MAIN.merchant_id])
        .args(["--merchant-user-id", MAIN.merchant_user_id])
        .args(["--junit", "junit.xml", "--regressions", "regs"]);
    cmd
}

/// A `mallcheck run` command against `base_url` as the embedded server's main merchant, with
/// reports in `dir`.
pub fn run_against(base_url: &str, dir: &Path) -> Command {
    let mut cmd = run_as_main(base_url, dir);
    cmd.arg("--cases").arg(repo().join("cases")).args([
        "--junit",
        "junit.xml",
        "--json",
        "report.json",
        "--color",
        "never",
    ]);
    cmd
}

/// Check ids of every finding in a JSON report.
pub fn finding_ids(report: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(report).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    finding_ids_of(v["cases"].as_array().map(Vec::as_slice).unwrap_or_default())
}

/// Check ids of every finding of these cases of a JSON report, sorted, each once.
pub fn finding_ids_of(cases: &[serde_json::Value]) -> Vec<String> {
    let mut ids: Vec<String> = cases
        .iter()
        .flat_map(|c| c["findings"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f["check"].as_str().map(str::to_string))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// What a finished command printed: its stdout, then its stderr.
pub fn output_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Asserts a finished command exited with `code`; the message shows what it printed.
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(out.status.code(), Some(code), "{}", output_text(out));
}

/// A loopback port nothing listens on (bound to find a free one, then released).
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("a local address").port()
}

/// A request as [`scripted_server`] read it: the head's lines after the request line and the
/// body (by its `Content-Length`).
pub struct RawHttpRequest {
    /// The request line.
    pub line: String,
    /// The header lines, each ending in CRLF.
    pub head: String,
    /// The body.
    pub body: Vec<u8>,
}

/// A loopback HTTP/1.1 server, a thread per connection, that reads each request and writes
/// the bytes `answer` makes of it (a whole response, written as is, so that a test can send
/// what no HTTP library would). Returns its `http://` URL.
pub fn scripted_server(
    answer: impl Fn(&RawHttpRequest) -> Vec<u8> + Send + Sync + 'static,
) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("a local address"));
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let answer = std::sync::Arc::clone(&answer);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut request = RawHttpRequest {
                    line: String::new(),
                    head: String::new(),
                    body: Vec::new(),
                };
                if reader.read_line(&mut request.line).unwrap_or(0) == 0 {
                    return;
                }
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if line == "\r\n" {
                        break;
                    }
                    request.head.push_str(&line);
                }
                request.body = vec![0; length];
                let _ = reader.read_exact(&mut request.body);
                let _ = (&stream).write_all(&answer(&request));
            });
        }
    });
    url
}
