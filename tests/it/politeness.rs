//! Politeness and CI splitting, measured from the server side: `--rate` caps arrivals, and
//! `--shard K/N` runs cover every case exactly once.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{bin, repo};

/// A minimal keep-alive HTTP server that records when each request arrives and answers an
/// empty mall list (or an empty products array).
fn counting_server() -> (String, Arc<Mutex<Vec<Instant>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&arrivals);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let log = Arc::clone(&log);
            std::thread::spawn(move || serve_connection(stream, &log));
        }
    });
    (url, arrivals)
}

fn serve_connection(stream: TcpStream, log: &Mutex<Vec<Instant>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        log.lock().unwrap().push(Instant::now());
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header == "\r\n" {
                break;
            }
            if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let answer = if request_line.contains("queryMallProducts") {
            "[]".to_string()
        } else {
            r#"{"success":true,"code":"0000","msg":"ok","data":[]}"#.to_string()
        };
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

#[test]
fn rate_caps_server_side_arrivals() {
    let (url, arrivals) = counting_server();
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .current_dir(dir.path())
        .env("MALLCHECK_SIGN_KEY", "k")
        .args([
            "run",
            "--base-url",
            &url,
            "--appid",
            "a",
            "--merchant-id",
            "m",
        ])
        .args([
            "--merchant-user-id",
            "u",
            "--rate",
            "20",
            "--jobs",
            "8",
            "--quiet",
        ])
        .arg("--cases")
        .arg(repo().join("cases"))
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{:?}", out);
    let times = arrivals.lock().unwrap().clone();
    assert!(times.len() >= 20, "only {} requests arrived", times.len());
    let span = times[times.len() - 1] - times[0];
    let rate = (times.len() - 1) as f64 / span.as_secs_f64();
    assert!(
        rate <= 20.0 * 1.02,
        "{} requests in {span:?}: {rate:.2}/s",
        times.len()
    );
    // No one-second window holds more than the rate (one arrival of jitter allowed).
    for (i, t) in times.iter().enumerate() {
        let in_window = times[i..]
            .iter()
            .take_while(|u| **u - *t < Duration::from_secs(1))
            .count();
        assert!(in_window <= 21, "{in_window} arrivals within 1 s");
    }
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn verdicts(report: &serde_json::Value) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"]["file"].as_str().unwrap().to_string(),
                c["id"]["name"].as_str().unwrap().to_string(),
                c["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn three_shards_merged_equal_one_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str], json_name: &str| {
        let out = Command::new(bin())
            .current_dir(dir.path())
            .env_remove("MALLCHECK_BASE_URL")
            .args(["run", "--quiet", "--cases"])
            .arg(repo().join("cases"))
            .args(extra)
            .args(["--json", json_name, "--junit", &format!("{json_name}.xml")])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    };
    run(&[], "all.json");
    for k in 1..=3 {
        run(&["--shard", &format!("{k}/3")], &format!("shard{k}.json"));
    }
    let parts: Vec<serde_json::Value> = (1..=3)
        .map(|k| json(&dir.path().join(format!("shard{k}.json"))))
        .collect();
    let sizes: Vec<usize> = parts
        .iter()
        .map(|p| p["cases"].as_array().unwrap().len())
        .collect();
    assert!(sizes.iter().all(|n| *n > 0), "{sizes:?}");
    let out = Command::new(bin())
        .current_dir(dir.path())
        .args([
            "merge",
            "--json",
            "merged.json",
            "shard1.json",
            "shard2.json",
            "shard3.json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = json(&dir.path().join("merged.json"));
    let all = json(&dir.path().join("all.json"));
    assert_eq!(verdicts(&merged), verdicts(&all));
    assert_eq!(sizes.iter().sum::<usize>(), verdicts(&all).len());
}

#[test]
fn list_prints_the_selected_cases() {
    let out = Command::new(bin())
        .args(["list", "--filter", "auth", "--cases"])
        .arg(repo().join("cases"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("auth.yaml › "), "{text}");
    assert!(!text.contains("paging.yaml"), "{text}");
}
