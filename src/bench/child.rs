//! Child processes of the bench: this executable run to its end under a time limit.

use std::io::{self};
use std::path::PathBuf;
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

/// Runs a child process to its end, killing it after `limit`; (status, stdout, stderr).
pub(crate) fn run_child(
    mut command: Process,
    limit: Duration,
) -> Result<(i32, String, String), String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let read = |pipe: Option<Box<dyn io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    };
    let out = read(stdout.map(|p| Box::new(p) as Box<dyn io::Read + Send>));
    let err = read(stderr.map(|p| Box::new(p) as Box<dyn io::Read + Send>));
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the child did not end within {} s",
                    limit.as_secs()
                ));
            }
            Err(e) => return Err(format!("cannot wait for the child: {e}")),
        }
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    Ok((status.code().unwrap_or(-1), out, err))
}

/// This executable, which is `mallcheck` when the bench runs from the binary.
pub(crate) fn mallcheck_exe() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let is_mallcheck = exe
        .file_stem()
        .is_some_and(|s| s.to_string_lossy() == "mallcheck");
    if is_mallcheck {
        Ok(exe)
    } else {
        Err(format!(
            "{} is not the mallcheck binary (run `mallcheck bench`)",
            exe.display()
        ))
    }
}
