//! `mallcheck serve` under slow and silent clients (issue 11, item 11): partial requests and
//! idle connections are closed after their timeouts, and a normal request is still answered,
//! also when the server is out of file descriptors.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use crate::common::{Server, bin};

/// Fail-safe for reads that must end: far longer than any timeout given to the server here,
/// far shorter than what the server did before it had timeouts (nothing, ever).
const READ_FAILSAFE: Duration = Duration::from_secs(60);

const PARTIAL_HEAD: &[u8] =
    b"POST /optimus/core/open/mall/queryMallList HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: app";

fn addr(base_url: &str) -> String {
    base_url.trim_start_matches("http://").to_string()
}

fn connect(addr: &str) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect to the server");
    s.set_read_timeout(Some(READ_FAILSAFE))
        .expect("read timeout");
    s
}

/// Sends one complete request and returns the status line of the answer.
fn answered(addr: &str) -> String {
    let mut s = connect(addr);
    s.write_all(b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .expect("send a request");
    let mut line = String::new();
    BufReader::new(s)
        .read_line(&mut line)
        .expect("an answer before the fail-safe");
    line
}

/// Whether the server has closed `s` (end of stream or reset) rather than leaving it open.
fn closed_by_server(s: &mut TcpStream) -> Result<(), String> {
    let mut buf = [0u8; 512];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(format!("still open after {READ_FAILSAFE:?}"));
            }
            Err(_) => return Ok(()),
        }
    }
}

/// Opens `partial` connections that send half a request head and `silent` ones that send
/// nothing, then checks that a normal request is answered and that every one of them is closed.
fn hold_and_check(base_url: &str, partial: usize, silent: usize) {
    let addr = addr(base_url);
    let mut held: Vec<TcpStream> = (0..partial + silent)
        .map(|i| {
            let mut s = connect(&addr);
            if i < partial {
                s.write_all(PARTIAL_HEAD).expect("send half a head");
            }
            s
        })
        .collect();
    let status = answered(&addr);
    assert!(status.starts_with("HTTP/1.1 404"), "{status:?}");
    for (i, s) in held.iter_mut().enumerate() {
        let what = if i < partial { "partial" } else { "silent" };
        if let Err(e) = closed_by_server(s) {
            panic!("{what} connection {i}: {e}");
        }
    }
}

#[test]
fn slow_partial_requests_are_closed_and_a_normal_request_is_answered() {
    let server = Server::start(&[
        "--header-timeout",
        "1",
        "--idle-timeout",
        "30",
        "--max-connections",
        "8",
    ]);
    hold_and_check(&server.base_url, 40, 10);
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    let server = Server::start(&["--header-timeout", "30", "--idle-timeout", "1"]);
    let mut s = connect(&addr(&server.base_url));
    s.write_all(b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .expect("send a request");
    let mut reader = BufReader::new(s.try_clone().expect("clone"));
    let mut length = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("answer head");
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length.expect("a Content-Length")];
    reader.read_exact(&mut body).expect("answer body");
    if let Err(e) = closed_by_server(&mut s) {
        panic!("kept alive: {e}");
    }
}

#[test]
fn bad_connection_limits_exit_2_naming_the_flag() {
    for (flag, value) in [
        ("--header-timeout", "0"),
        ("--idle-timeout", "-1"),
        ("--idle-timeout", "NaN"),
        ("--max-connections", "0"),
    ] {
        let out = Command::new(bin())
            .args(["serve", "--port", "0", &format!("{flag}={value}")])
            .output()
            .expect("run serve");
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {text}");
        assert!(text.contains(flag), "{flag} {value}: {text}");
    }
}

/// `mallcheck serve` with a soft limit of `files` open file descriptors, killed on drop.
#[cfg(unix)]
fn limited_server(files: u32, extra: &[&str]) -> Server {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -n {files} && exec \"$0\" \"$@\""))
        .arg(bin())
        .args(["serve", "--port", "0"])
        .args(extra);
    Server::spawn(cmd)
}

#[cfg(unix)]
#[test]
fn past_the_descriptor_limit_the_server_recovers_and_answers() {
    let server = limited_server(48, &["--header-timeout", "1"]);
    hold_and_check(&server.base_url, 80, 20);
}
