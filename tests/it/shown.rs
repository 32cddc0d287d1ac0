//! Text from outside is shown capped: a value the service controls, however long, takes a
//! bounded place in every report and on the console, curl lines included.

use std::path::{Path, PathBuf};

use crate::common::run_against;
use crate::politeness::{RawRequest, raw_server, response};

/// Length of the cursor the service gives: the `mallSn` of the last record of a full page.
const CURSOR_BYTES: usize = 8 * 1024 * 1024;

/// A service whose first page of one mall (a full page at size 1) ends with an 8 MB `mallSn`,
/// which the walk sends back as the next page's cursor; any other page is empty.
fn huge_cursor_answer(request: &RawRequest, _: usize) -> String {
    let body = String::from_utf8_lossy(&request.body);
    if request.path().contains("queryMallProducts") {
        return response("200 OK", "", "[]");
    }
    if body.contains(r#""endCursor":null"#) {
        let sn = "7".repeat(CURSOR_BYTES);
        let page =
            format!(r#"{{"success":true,"code":"0000","msg":"ok","data":[{{"mallSn":"{sn}"}}]}}"#);
        return response("200 OK", "", &page);
    }
    response(
        "200 OK",
        "",
        r#"{"success":true,"code":"0000","msg":"ok","data":[]}"#,
    )
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                pending.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn an_eight_megabyte_cursor_takes_a_bounded_place_in_every_report() {
    let (url, log) = raw_server(huge_cursor_answer);
    let dir = tempfile::tempdir().unwrap();
    let out = run_against(&url, dir.path())
        .args(["--no-preflight", "--verbose", "--timeout", "120"])
        .args(["--filter", "paging walk agrees at every page size"])
        .output()
        .unwrap();
    // Proof that the cursor went out: a request carried it.
    let sent = log
        .lock()
        .unwrap()
        .iter()
        .any(|r| r.body.len() > CURSOR_BYTES);
    assert!(sent, "no request carried the cursor");
    let mut outputs = vec![
        ("stdout".to_string(), out.stdout.len()),
        ("stderr".to_string(), out.stderr.len()),
    ];
    for p in files_under(dir.path()) {
        outputs.push((
            p.display().to_string(),
            std::fs::metadata(&p).unwrap().len() as usize,
        ));
    }
    assert!(outputs.len() >= 6, "{outputs:?}");
    for (what, len) in outputs {
        assert!(len < 1024 * 1024, "{what}: {len} bytes");
    }
    let json = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    assert!(json.contains("bytes more"), "the cut is not marked");
}
