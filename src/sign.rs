//! Request signers for the `Authorization: <appid> <signature>` header (spec §5).
//!
//! The spec does not show how the signature is computed, so the scheme is pluggable: `md5`
//! (lowercase hex md5 of the raw body bytes followed by the key; the default), `hmac-sha256`
//! (lowercase hex of HMAC-SHA256 over the body with the key), `static` (a fixed value) and
//! `command` (an external program reads the body on stdin and prints the signature). The command
//! runs without blocking the runtime, within a time limit, with bounded output, in its own
//! process group that is killed on timeout, on cancellation and when the run ends.

use std::io;
use std::process::{ExitStatus, Stdio};
use std::str::FromStr;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use hmac::{Hmac, Mac};
use md5::{Digest, Md5};
use sha2::Sha256;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::redact::{Redactor, Secret};

/// Time limit of one run of the sign command unless [`Signer::with_timeout`] sets another (a run
/// gives it `--timeout`).
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of the command's stdout accepted: a signature is short.
pub const MAX_SIGNATURE_BYTES: usize = 8 * 1024;
/// Most bytes of the command's stderr kept.
const MAX_STDERR_BYTES: usize = 4 * 1024;
/// Characters of stderr quoted in an error.
const STDERR_EXCERPT_CHARS: usize = 200;
/// Words of the command at least this long are scrubbed from its stderr (a key on the command
/// line is echoed by many tools).
const SCRUBBED_WORD_CHARS: usize = 8;

/// Name of a signing scheme, as given by `--signer` / `MALLCHECK_SIGNER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignerKind {
    /// md5(body ++ key), lowercase hex.
    Md5,
    /// HMAC-SHA256(key, body), lowercase hex.
    HmacSha256,
    /// The key itself is the signature.
    Static,
    /// An external command prints the signature.
    Command,
}

impl FromStr for SignerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "md5" => Ok(SignerKind::Md5),
            "hmac-sha256" => Ok(SignerKind::HmacSha256),
            "static" => Ok(SignerKind::Static),
            "command" => Ok(SignerKind::Command),
            other => Err(format!(
                "unknown signer `{other}`; expected one of md5, hmac-sha256, static, command"
            )),
        }
    }
}

/// A configured signer. `Debug` never shows the key.
#[derive(Debug, Clone)]
pub enum Signer {
    /// md5(body ++ key).
    Md5 {
        /// Signing key.
        key: Secret,
    },
    /// HMAC-SHA256.
    HmacSha256 {
        /// Signing key.
        key: Secret,
    },
    /// A fixed signature.
    Static {
        /// The signature value.
        value: Secret,
    },
    /// `sh -c <command>` with the body on stdin.
    Command {
        /// Shell command line (it may hold a key: never written anywhere).
        command: Secret,
        /// Time limit of one run.
        timeout: Duration,
        /// The session's redactor, for what the command writes to stderr (it may echo the
        /// run's key); an empty one until [`Signer::with_redactor`] gives the session's.
        redactor: Redactor,
    },
}

/// Why a signature could not be computed. The message never holds the command or a key.
#[derive(Debug, thiserror::Error)]
#[error("the sign command {kind}")]
pub struct SignError {
    /// What went wrong.
    #[source]
    pub kind: SignErrorKind,
}

/// What went wrong with the sign command.
#[derive(Debug, thiserror::Error)]
pub enum SignErrorKind {
    /// `sh` could not be started.
    #[error("could not be started")]
    Spawn(#[source] io::Error),
    /// A pipe to or from the command failed.
    #[error("could not be talked to")]
    Pipe(#[source] io::Error),
    /// It ran past its time limit and was killed with its process group.
    #[error("timed out after {} s (killed with its process group)", .0.as_secs_f64())]
    TimedOut(Duration),
    /// It exited unsuccessfully.
    #[error("failed ({status}){stderr}")]
    Failed {
        /// Exit status or signal.
        status: String,
        /// `; stderr: …` (redacted, short), or empty.
        stderr: String,
    },
    /// It printed nothing.
    #[error("printed no signature{stderr}")]
    NoSignature {
        /// `; stderr: …` (redacted, short), or empty.
        stderr: String,
    },
    /// It printed more than a signature can be.
    #[error("printed more than {MAX_SIGNATURE_BYTES} bytes")]
    TooLong,
}

impl From<SignErrorKind> for SignError {
    fn from(kind: SignErrorKind) -> Self {
        SignError { kind }
    }
}

impl Signer {
    /// Builds a signer of `kind`; `secret` is the key (md5, hmac), the value (static) or the
    /// command line (command).
    pub fn new(kind: SignerKind, secret: String) -> Signer {
        match kind {
            SignerKind::Md5 => Signer::Md5 {
                key: Secret::new(secret),
            },
            SignerKind::HmacSha256 => Signer::HmacSha256 {
                key: Secret::new(secret),
            },
            SignerKind::Static => Signer::Static {
                value: Secret::new(secret),
            },
            SignerKind::Command => Signer::Command {
                command: Secret::new(secret),
                timeout: DEFAULT_COMMAND_TIMEOUT,
                redactor: Redactor::new(),
            },
        }
    }

    /// Sets the time limit of one run of the sign command (other signers take no time).
    pub fn with_timeout(self, limit: Duration) -> Signer {
        match self {
            Signer::Command {
                command, redactor, ..
            } => Signer::Command {
                command,
                timeout: limit,
                redactor,
            },
            other => other,
        }
    }

    /// Scrubs what the sign command writes to stderr with `redactor` (the session's) as well
    /// as of the command itself (other signers print nothing).
    pub fn with_redactor(self, redactor: &Redactor) -> Signer {
        match self {
            Signer::Command {
                command, timeout, ..
            } => Signer::Command {
                command,
                timeout,
                redactor: redactor.clone(),
            },
            other => other,
        }
    }

    /// The same algorithm without the key (md5 of the body alone, HMAC under an empty key):
    /// a signature anyone can compute, which a service that checks the key refuses. `None`
    /// for the signers whose algorithm mallcheck does not know (`static`, `command`) and for
    /// an empty key (the signature then is the valid one).
    pub fn unkeyed(&self) -> Option<Signer> {
        match self {
            Signer::Md5 { key } if !key.expose().is_empty() => Some(Signer::Md5 {
                key: Secret::new(String::new()),
            }),
            Signer::HmacSha256 { key } if !key.expose().is_empty() => Some(Signer::HmacSha256 {
                key: Secret::new(String::new()),
            }),
            _ => None,
        }
    }

    /// Computes the signature of a raw request body.
    pub async fn sign(&self, body: &[u8]) -> Result<String, SignError> {
        match self {
            Signer::Md5 { key } => {
                let mut h = Md5::new();
                h.update(body);
                h.update(key.expose().as_bytes());
                Ok(hex::encode(h.finalize()))
            }
            Signer::HmacSha256 { key } => {
                let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key.expose().as_bytes())
                    .expect("HMAC accepts keys of any length");
                mac.update(body);
                Ok(hex::encode(mac.finalize().into_bytes()))
            }
            Signer::Static { value } => Ok(value.expose().to_string()),
            Signer::Command {
                command,
                timeout,
                redactor,
            } => run_command(command, *timeout, redactor, body).await,
        }
    }

    /// The scheme's name as `--signer` takes it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Signer::Md5 { .. } => "md5",
            Signer::HmacSha256 { .. } => "hmac-sha256",
            Signer::Static { .. } => "static",
            Signer::Command { .. } => "command",
        }
    }

    /// Whether the signature depends on the body: `static` gives the same value for every body,
    /// so moving it between bodies proves nothing (a `command` is assumed to depend on it).
    pub fn depends_on_body(&self) -> bool {
        !matches!(self, Signer::Static { .. })
    }

    /// Every secret this signer holds, for scrubbing free text.
    pub fn secrets(&self) -> Vec<&Secret> {
        match self {
            Signer::Md5 { key } | Signer::HmacSha256 { key } => vec![key],
            Signer::Static { value } => vec![value],
            Signer::Command { command, .. } => vec![command],
        }
    }

    /// Builds the full `Authorization` header value.
    pub async fn authorization(&self, appid: &str, body: &[u8]) -> Result<Secret, SignError> {
        Ok(Secret::new(format!("{appid} {}", self.sign(body).await?)))
    }
}

/// The process group of a running sign command; killed (once) by [`ProcessGroup::kill`] or on
/// drop, so that a cancelled run (Ctrl-C, a finished run) leaves no process behind.
struct ProcessGroup(AtomicI32);

impl ProcessGroup {
    fn new(leader: Option<u32>) -> ProcessGroup {
        ProcessGroup(AtomicI32::new(
            leader.and_then(|id| i32::try_from(id).ok()).unwrap_or(0),
        ))
    }

    /// Kills every process of the group (the shell and whatever it started).
    fn kill(&self) {
        let id = self.0.swap(0, Ordering::SeqCst);
        if id > 0 {
            kill_group(id);
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(unix)]
fn kill_group(id: i32) {
    // SAFETY: kill(2) only sends a signal; a negative pid names the process group that
    // `process_group(0)` made the command lead, and no memory is shared with the call.
    unsafe {
        libc::kill(-id, libc::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_id: i32) {}

/// Runs `sh -c <command>` with `body` on stdin: the body is written while stdout and stderr are
/// read (a command that talks before it reads cannot deadlock), both are capped, and the whole
/// run is bounded by `limit`.
async fn run_command(
    command: &Secret,
    limit: Duration,
    redactor: &Redactor,
    body: &[u8],
) -> Result<String, SignError> {
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(command.expose())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    shell.process_group(0);
    let mut child = shell.spawn().map_err(SignErrorKind::Spawn)?;
    let group = ProcessGroup::new(child.id());
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let write = async move {
        let Some(mut stdin) = stdin else {
            return Ok(());
        };
        match stdin.write_all(body).await {
            // A command may sign without reading the body.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    };
    let wait = async {
        let status = child.wait().await;
        // Whatever the command left running in its group would hold the pipes open.
        group.kill();
        status
    };
    let (mut out, mut out_cut) = (Vec::new(), false);
    let (mut err, mut err_cut) = (Vec::new(), false);
    let run = talk(
        write,
        wait,
        read_capped(stdout, MAX_SIGNATURE_BYTES, &mut out, &mut out_cut),
        read_capped(stderr, MAX_STDERR_BYTES, &mut err, &mut err_cut),
    );
    let Ok((written, status, out_read, err_read)) = tokio::time::timeout(limit, run).await else {
        group.kill();
        let _ = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
        return Err(SignErrorKind::TimedOut(limit).into());
    };
    let (out, overflow, err) = (out, out_cut, err);
    out_read.map_err(SignErrorKind::Pipe)?;
    err_read.map_err(SignErrorKind::Pipe)?;
    let status = status.map_err(SignErrorKind::Pipe)?;
    let stderr = excerpt(&err, err_cut, command, redactor);
    if !status.success() {
        return Err(SignErrorKind::Failed {
            status: describe(status),
            stderr,
        }
        .into());
    }
    written.map_err(SignErrorKind::Pipe)?;
    if overflow {
        return Err(SignErrorKind::TooLong.into());
    }
    let sig = String::from_utf8_lossy(&out).trim().to_string();
    if sig.is_empty() {
        return Err(SignErrorKind::NoSignature { stderr }.into());
    }
    Ok(sig)
}

/// How long the pipes are read once the command has exited: what it wrote is already in
/// them, so this is only the time to read it, not a wait for a process it left behind.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(200);

/// Drives one run of the command: the body is written and both pipes are read until the
/// command exits; then the pipes are read to their end, or for [`DRAIN_AFTER_EXIT`] at most,
/// since a process the command detached (`setsid`, a daemon) may hold them open for as long as
/// it lives and the signature is already there. A body not yet written when the command exits
/// is not needed. The reads' results: `Ok` also when one was cut short after the exit.
async fn talk(
    write: impl Future<Output = io::Result<()>>,
    wait: impl Future<Output = io::Result<ExitStatus>>,
    out: impl Future<Output = io::Result<()>>,
    err: impl Future<Output = io::Result<()>>,
) -> (
    io::Result<()>,
    io::Result<ExitStatus>,
    io::Result<()>,
    io::Result<()>,
) {
    // On the heap: a signed request's future is deep already.
    let (mut write, mut wait, mut out, mut err) = (
        Box::pin(write),
        Box::pin(wait),
        Box::pin(out),
        Box::pin(err),
    );
    let (mut written, mut out_done, mut err_done) = (None, None, None);
    let status = loop {
        tokio::select! {
            r = &mut write, if written.is_none() => written = Some(r),
            r = &mut out, if out_done.is_none() => out_done = Some(r),
            r = &mut err, if err_done.is_none() => err_done = Some(r),
            status = &mut wait => break status,
        }
    };
    let drain = async {
        if out_done.is_none() {
            out_done = Some(out.await);
        }
        if err_done.is_none() {
            err_done = Some(err.await);
        }
    };
    let _ = tokio::time::timeout(DRAIN_AFTER_EXIT, drain).await;
    (
        written.unwrap_or(Ok(())),
        status,
        out_done.unwrap_or(Ok(())),
        err_done.unwrap_or(Ok(())),
    )
}

/// Reads a pipe to its end into `kept`, keeping at most `cap` bytes; `overflow` is set when
/// more came. What was read stays in `kept` when the read is dropped before the end.
async fn read_capped<R: AsyncRead + Unpin>(
    pipe: Option<R>,
    cap: usize,
    kept: &mut Vec<u8>,
    overflow: &mut bool,
) -> io::Result<()> {
    let Some(mut pipe) = pipe else {
        return Ok(());
    };
    let mut buf = vec![0u8; 8192];
    loop {
        let n = pipe.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        let room = cap - kept.len();
        kept.extend_from_slice(&buf[..n.min(room)]);
        *overflow |= n > room;
    }
}

fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => status.to_string(),
    }
}

/// `; stderr: …`: the start of what the command wrote to stderr, on one line, without control
/// characters, and with the command and its long words (a key, a key file) redacted. `cut`
/// says that stderr was cut at [`MAX_STDERR_BYTES`]: what the cut left of a secret is left out.
fn excerpt(stderr: &[u8], cut: bool, command: &Secret, redactor: &Redactor) -> String {
    let words: Vec<Secret> = command
        .expose()
        .split(|c: char| c.is_whitespace() || "'\"=;|&<>()$`".contains(c))
        .filter(|w| w.chars().count() >= SCRUBBED_WORD_CHARS)
        .map(Secret::new)
        .collect();
    let mut secrets: Vec<&Secret> = vec![command];
    secrets.extend(words.iter());
    let text = if cut {
        let own = Redactor::new();
        for s in &secrets {
            own.add_secret(s.expose());
        }
        let scrubbed = redactor.excerpt(stderr, stderr.len(), false);
        own.excerpt(scrubbed.as_bytes(), scrubbed.len(), false)
    } else {
        String::from_utf8_lossy(stderr).into_owned()
    };
    let scrubbed = redactor.scrub_with(&text, &secrets);
    let one_line: String = scrubbed
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    if one_line.is_empty() {
        return String::new();
    }
    let mut short: String = one_line.chars().take(STDERR_EXCERPT_CHARS).collect();
    if one_line.chars().count() > STDERR_EXCERPT_CHARS {
        short.push('…');
    }
    format!("; stderr: {short}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(line: &str) -> Signer {
        Signer::new(SignerKind::Command, line.into())
    }

    #[tokio::test]
    async fn md5_is_body_then_key() {
        // md5("{}" ++ "k") computed independently with `printf '{}k' | md5sum`.
        let s = Signer::new(SignerKind::Md5, "k".into());
        assert_eq!(
            s.sign(b"{}").await.unwrap(),
            "e71dba8e493592c5fbe2085dde7abe1f"
        );
    }

    #[tokio::test]
    async fn command_signer_reads_stdin() {
        assert_eq!(command("tr a-z A-Z").sign(b"abc").await.unwrap(), "ABC");
        assert_eq!(
            command("echo fixed").sign(&[b'x'; 200_000]).await.unwrap(),
            "fixed",
            "a command may ignore the body"
        );
    }

    #[tokio::test]
    async fn a_chatty_command_with_a_big_body_does_not_deadlock() {
        // 100 KB to stderr before reading 200 KB of stdin: both pipes are far past their buffers.
        let s = command("head -c 100000 /dev/zero >&2; wc -c");
        assert_eq!(s.sign(&[b'x'; 200_000]).await.unwrap(), "200000");
    }

    #[tokio::test]
    async fn a_command_that_leaves_a_detached_child_holding_stdout_signs() {
        // The child leaves the process group (setsid) and keeps the pipe open for 30 s.
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let line = format!(
            "echo sig; setsid sh -c 'echo $$ > {}; exec sleep 30' &",
            pid_file.display()
        );
        let s = command(&line).with_timeout(Duration::from_secs(20));
        let signed = s.sign(b"{}").await;
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|p| p.trim().parse::<i32>().ok())
        {
            // SAFETY: kill(2) of the child this test started.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        assert_eq!(signed.unwrap(), "sig");
    }

    #[tokio::test]
    async fn a_hanging_command_is_killed_at_its_limit() {
        let s = command("sleep 3600").with_timeout(Duration::from_millis(200));
        let e = s.sign(b"{}").await.unwrap_err();
        assert!(matches!(e.kind, SignErrorKind::TimedOut(_)), "{e}");
        assert_eq!(
            e.to_string(),
            "the sign command timed out after 0.2 s (killed with its process group)"
        );
    }

    #[tokio::test]
    async fn a_failure_gives_the_status_and_a_redacted_excerpt_never_the_command() {
        let line = "echo \"bad key s3cr3t-k3y-value\" >&2; exit 3";
        let e = command(line).sign(b"{}").await.unwrap_err().to_string();
        assert_eq!(
            e,
            "the sign command failed (exit status 3); stderr: bad key <redacted>"
        );
        let e = command("printf '\\033[2J' >&2; true")
            .sign(b"{}")
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            e, "the sign command printed no signature; stderr: [2J",
            "no control characters"
        );
        let e = command("kill -9 $$")
            .sign(b"{}")
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(e, "the sign command failed (killed by signal 9)");
    }

    #[tokio::test]
    async fn stderr_cut_at_its_cap_in_a_key_leaves_none_of_it() {
        // 4,080 blanks (one space on the excerpt's line), then the key across the 4,096-byte cap.
        let line = "printf '%4080s' '' >&2; echo \"key=sign-key-0123456789\" >&2; exit 3";
        let e = command(line).sign(b"{}").await.unwrap_err().to_string();
        assert!(!e.contains("sign-key"), "{e}");
        assert!(e.ends_with("; stderr: key="), "{e}");
    }

    #[tokio::test]
    async fn output_is_bounded() {
        let e = command("head -c 10000000 /dev/zero")
            .sign(b"{}")
            .await
            .unwrap_err();
        assert!(matches!(e.kind, SignErrorKind::TooLong), "{e}");
        let e = command("head -c 10000000 /dev/zero | tr '\\0' e >&2; exit 1")
            .sign(b"{}")
            .await
            .unwrap_err();
        assert!(e.to_string().len() < 400, "{e}");
    }

    #[test]
    fn debug_hides_key_and_command() {
        let s = Signer::new(SignerKind::HmacSha256, "hidden-key".into());
        assert!(!format!("{s:?}").contains("hidden-key"));
        let s = command("sign --key hidden-key");
        assert!(!format!("{s:?}").contains("hidden-key"));
    }
}
