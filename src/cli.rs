//! Clap derive types for the command line; no logic.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Exit codes, shown at the end of `--help`.
const EXIT_CODES: &str = "Exit codes (run, fuzz, diff, merge):
  0  every case passed (warnings allowed unless --strict)
  1  the service breaks the contract: wrong data, a 5xx, a body that is not JSON, an answer
     that times out (also an interrupted run, and a report that cannot be written)
  2  a usage or configuration error (bad flag, malformed case file, unknown schema)
  3  could not test: unreachable (refused, DNS, TLS), the preflight refused or unanswered,
     rate-limited until the run gave up, or the selected checks covered nothing (the merchant
     lists no mall: --allow-empty-merchant if that is expected)
The JSON report says which in `exit_code` and `verdict`; JUnit in the testsuite properties
mallcheck.exit-code and mallcheck.verdict.";

/// Contract and conformance harness for the Mall Query Interface.
#[derive(Debug, Parser)]
#[command(name = "mallcheck", version, about, after_help = EXIT_CODES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the case files against a base URL (or the embedded reference server).
    #[command(after_help = EXIT_CODES)]
    Run(Box<RunArgs>),
    /// Serve the reference implementation of the interface (optionally with a fault).
    #[command(after_help = crate::server::guide::help())]
    Serve(ServeArgs),
    /// Print the cases that `run` would run with the same selection flags.
    List(Box<RunArgs>),
    /// List every check: id, severity, spec section and what it enforces.
    Checks(ChecksArgs),
    /// Generate requests, check every response and shrink failures to a minimal reproducer.
    #[command(after_help = EXIT_CODES)]
    Fuzz(Box<FuzzArgs>),
    /// Review, accept or reject pending snapshots (`.snap.new`).
    Snapshots(SnapshotsArgs),
    /// Compare a candidate release with snapshots recorded against the baseline release and
    /// classify every change as breaking or additive.
    #[command(after_help = EXIT_CODES)]
    Diff(Box<DiffArgs>),
    /// Merge the JUnit and JSON reports of several runs (e.g. CI shards) into one of each.
    #[command(after_help = EXIT_CODES)]
    Merge(MergeArgs),
    /// Write an OpenAPI 3.1 document of the interface, built from the schemas.
    Openapi(OpenapiArgs),
    /// Validate captured JSON responses offline against a schema.
    #[command(after_help = EXIT_CODES)]
    Validate(ValidateArgs),
    /// Measure mallcheck against the loopback limit on the embedded server and print every
    /// figure as a ratio with its target (build with --release).
    Bench(BenchArgs),
    /// Write editable copies of the shipped cases and schemas, an example mallcheck.toml and
    /// the .gitignore lines for reports; existing files are kept.
    Init(InitArgs),
    /// Print a shell completion script (e.g. `mallcheck completions bash >
    /// ~/.local/share/bash-completion/completions/mallcheck`).
    Completions(CompletionsArgs),
    /// Print the manual page (roff) on standard output, or write one page per command with
    /// --dir.
    Man(ManArgs),
}

/// `mallcheck completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `mallcheck man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write `mallcheck.1` and a page per command (`mallcheck-run.1`, ...) into this directory
    /// instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour on a terminal, unless NO_COLOR is set.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Signing scheme for the Authorization header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SignerArg {
    /// Lowercase hex md5 of the body bytes followed by the key.
    Md5,
    /// Lowercase hex HMAC-SHA256 of the body with the key.
    HmacSha256,
    /// The key is used as the signature as is.
    Static,
    /// MALLCHECK_SIGN_COMMAND reads the body on stdin and prints the signature.
    Command,
}

impl From<ColorChoice> for crate::report::style::ColorMode {
    fn from(choice: ColorChoice) -> Self {
        match choice {
            ColorChoice::Auto => crate::report::style::ColorMode::Auto,
            ColorChoice::Always => crate::report::style::ColorMode::Always,
            ColorChoice::Never => crate::report::style::ColorMode::Never,
        }
    }
}

impl From<SignerArg> for crate::sign::SignerKind {
    fn from(arg: SignerArg) -> Self {
        match arg {
            SignerArg::Md5 => crate::sign::SignerKind::Md5,
            SignerArg::HmacSha256 => crate::sign::SignerKind::HmacSha256,
            SignerArg::Static => crate::sign::SignerKind::Static,
            SignerArg::Command => crate::sign::SignerKind::Command,
        }
    }
}

/// Snapshot mode of `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SnapshotArg {
    /// Compare with recorded snapshots; new ones are written as pending `.snap.new`.
    Check,
    /// Record every snapshot, overwriting the accepted ones.
    Update,
    /// Take no snapshots.
    Off,
}

/// Where the service is and who we are to it.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Base URL of the service (may carry a path prefix) [env: MALLCHECK_BASE_URL]. Without it
    /// the embedded reference server is started on 127.0.0.1 and tested.
    #[arg(long, value_name = "URL", help_heading = "Target")]
    pub base_url: Option<String>,
    /// Application id sent in the body and the Authorization header [env: MALLCHECK_APPID].
    #[arg(long, value_name = "APPID", help_heading = "Target")]
    pub appid: Option<String>,
    /// Merchant id of the seller identity [env: MALLCHECK_MERCHANT_ID].
    #[arg(long, value_name = "ID", help_heading = "Target")]
    pub merchant_id: Option<String>,
    /// Merchant user id of the seller identity [env: MALLCHECK_MERCHANT_USER_ID].
    #[arg(long, value_name = "ID", help_heading = "Target")]
    pub merchant_user_id: Option<String>,
    /// Role of the seller identity [env: MALLCHECK_ROLE] [default: super_admin].
    #[arg(long, value_name = "ROLE", help_heading = "Target")]
    pub role: Option<String>,
    /// Signing scheme (the spec does not show it) [env: MALLCHECK_SIGNER] [default: md5]. The key comes from
    /// MALLCHECK_SIGN_KEY or --sign-key-file, never from a flag.
    #[arg(long, value_enum, value_name = "SCHEME", help_heading = "Target")]
    pub signer: Option<SignerArg>,
    /// File holding the signing key (instead of MALLCHECK_SIGN_KEY).
    #[arg(long, value_name = "PATH", help_heading = "Target")]
    pub sign_key_file: Option<PathBuf>,
    /// PEM file of certificate authorities to trust besides the system's: the private CA, or
    /// the self-signed certificate, of an https service [env: MALLCHECK_CACERT].
    #[arg(long, value_name = "FILE", help_heading = "Target")]
    pub cacert: Option<PathBuf>,
    /// HTTP proxy of every request, http://[USER:PASSWORD@]HOST:PORT, or `none` to send
    /// directly [env: MALLCHECK_PROXY]. Without it, curl's variables apply (http_proxy,
    /// HTTPS_PROXY, ALL_PROXY, NO_PROXY), except to a loopback host.
    #[arg(long, value_name = "URL", help_heading = "Target")]
    pub proxy: Option<String>,
    /// Per-request deadline in seconds: connect, first byte and the whole body; also the time
    /// limit of one run of the sign command [env: MALLCHECK_TIMEOUT] [default: 10].
    #[arg(long, value_name = "SECS", value_parser = crate::flag_range::seconds, help_heading = "Limits")]
    pub timeout: Option<f64>,
    /// Longest total wait of one request for `Retry-After` (a 429, or a 503 with it), in
    /// seconds [env: MALLCHECK_MAX_RETRY_WAIT] [default: 10]. A longer wait is not waited for: the request is reported as
    /// `transport.rate-limited`, an error of the run (exit 3, could not test), not a contract
    /// failure.
    #[arg(long, value_name = "SECS", value_parser = crate::flag_range::seconds_or_zero, help_heading = "Limits")]
    pub max_retry_wait: Option<f64>,
    /// Largest response body accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::settings::DEFAULT_MAX_BODY, value_parser = crate::flag_range::int::<usize>(crate::flag_range::MAX_BODY), help_heading = "Limits")]
    pub max_body: usize,
    /// Follow redirects within the base URL's origin (scheme, host and port); a redirect to
    /// another origin is never followed and is always a `transport.redirect` finding.
    #[arg(long, help_heading = "Limits")]
    pub follow_redirects: bool,
    /// Named environment of the config file (`[profile.NAME]`); flags and MALLCHECK_*
    /// variables override its settings [env: MALLCHECK_PROFILE].
    #[arg(long, value_name = "NAME", help_heading = "Target")]
    pub profile: Option<String>,
    /// Config file holding the profiles [default: mallcheck.toml]; given, a profile must be
    /// chosen too (--profile or MALLCHECK_PROFILE).
    #[arg(long, value_name = "PATH", help_heading = "Target")]
    pub config: Option<PathBuf>,
}

/// The long flags of every command of mallcheck (`strict`, `ci`, ...).
pub fn long_flags() -> Vec<String> {
    use clap::CommandFactory as _;
    let cli = Cli::command();
    let mut flags: Vec<String> = cli
        .get_subcommands()
        .flat_map(|c| c.get_arguments())
        .filter_map(|a| a.get_long().map(str::to_owned))
        .collect();
    flags.sort();
    flags.dedup();
    flags
}

impl From<&TargetArgs> for crate::settings::Flags {
    fn from(args: &TargetArgs) -> Self {
        crate::settings::Flags {
            base_url: args.base_url.clone(),
            appid: args.appid.clone(),
            merchant_id: args.merchant_id.clone(),
            merchant_user_id: args.merchant_user_id.clone(),
            role: args.role.clone(),
            signer: args.signer.map(Into::into),
            sign_key_file: args.sign_key_file.clone(),
            cacert: args.cacert.clone(),
            proxy: args.proxy.clone(),
            timeout: args.timeout,
            max_retry_wait: args.max_retry_wait,
            max_body: args.max_body,
            follow_redirects: args.follow_redirects,
            profile: args.profile.clone(),
            config: args
                .config
                .clone()
                .unwrap_or_else(|| crate::settings::Flags::default().config),
            config_given: args.config.is_some(),
            command_flags: long_flags(),
            ..crate::settings::Flags::default()
        }
    }
}

impl From<&RunArgs> for crate::settings::Flags {
    fn from(args: &RunArgs) -> Self {
        crate::settings::Flags {
            jobs: args.jobs,
            rate: args.rate,
            cursor: args.cursor.clone(),
            exhaustive: args.exhaustive,
            walk_prefix: args.walk_prefix,
            ci: args.ci,
            ..crate::settings::Flags::from(&args.target)
        }
    }
}

/// Output settings shared by run and fuzz.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// JUnit XML report path.
    #[arg(
        long,
        value_name = "PATH",
        default_value = "reports/junit.xml",
        help_heading = "Reports"
    )]
    pub junit: PathBuf,
    /// JSON report path (format_version 1).
    #[arg(
        long,
        value_name = "PATH",
        default_value = "reports/report.json",
        help_heading = "Reports"
    )]
    pub json: PathBuf,
    /// Single-file HTML report path (open it from a CI artifact).
    #[arg(
        long,
        value_name = "PATH",
        default_value = "reports/report.html",
        help_heading = "Reports"
    )]
    pub html: PathBuf,
    /// Markdown summary path (for a CI step summary or a pull-request comment).
    #[arg(
        long,
        value_name = "PATH",
        default_value = "reports/summary.md",
        help_heading = "Reports"
    )]
    pub markdown: PathBuf,
    /// Colour.
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        default_value = "auto",
        help_heading = "Reports"
    )]
    pub color: ColorChoice,
    /// Print only failures and the summary.
    #[arg(long, short, conflicts_with = "verbose", help_heading = "Reports")]
    pub quiet: bool,
    /// Print every exchange (redacted).
    #[arg(long, short, help_heading = "Reports")]
    pub verbose: bool,
}

impl OutputArgs {
    /// The report paths.
    pub fn paths(&self) -> Vec<&std::path::Path> {
        vec![&self.junit, &self.json, &self.html, &self.markdown]
    }
}

/// `mallcheck run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Target service.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Reports and console.
    #[command(flatten)]
    pub output: OutputArgs,
    /// Case files or directories (default: ./cases, else the shipped cases).
    #[arg(long = "cases", value_name = "PATH", num_args = 1.., help_heading = "Cases")]
    pub cases: Vec<PathBuf>,
    /// Directory of JSON Schemas replacing the built-in ones (default: ./schemas when it holds
    /// them).
    #[arg(long, value_name = "DIR", help_heading = "Cases")]
    pub schemas: Option<PathBuf>,
    /// Run only matching cases (repeatable): `tag:NAME`, `check:ID`, or text in the case name,
    /// file, endpoint, a tag, or a check id the case exercises.
    #[arg(long, value_name = "TEXT", help_heading = "Cases")]
    pub filter: Vec<String>,
    /// Observed-severity findings (e.g. product order) fail the run.
    #[arg(long, help_heading = "Verdict")]
    pub strict: bool,
    /// Whether a 5xx, a hang or a dropped connection on an odd request or a replayed fuzz
    /// regression (a robustness finding, no rule of the spec) fails the run or only warns
    #[arg(
        long,
        value_enum,
        value_name = "GATE",
        default_value = "fail",
        help_heading = "Verdict"
    )]
    pub robustness: crate::checks::robustness::RobustnessGate,
    /// Requests in flight at once, across cases and inside a case [env: MALLCHECK_JOBS]
    /// [default: 4].
    #[arg(long, value_name = "N", value_parser = crate::flag_range::int::<usize>(crate::flag_range::JOBS), help_heading = "Limits")]
    pub jobs: Option<usize>,
    /// Requests per second, at most [env: MALLCHECK_RATE] [default: unlimited on loopback, 10
    /// for other hosts].
    #[arg(long, value_name = "R", value_parser = crate::flag_range::rate_or_zero, help_heading = "Limits")]
    pub rate: Option<f64>,
    /// Retries of a request that failed in transport (connect, reset, a connection closed
    /// under it: a keep-alive race with the service's idle timeout); a case that passes only
    /// on a retry is reported as flaky. 0 turns retries off
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = crate::flag_range::int::<u32>(crate::flag_range::RETRIES), help_heading = "Limits")]
    pub retries: u32,
    /// Run only shard K of N (1-based), e.g. `--shard 2/3`: N jobs cover every case once.
    #[arg(long, value_name = "K/N", help_heading = "Cases")]
    pub shard: Option<String>,
    /// Page limit of a cursor walk (default: enough for 10,000 records at page size 1); given,
    /// it also caps a case's own `max-pages`.
    #[arg(
        long,
        value_name = "N",
        value_parser = crate::flag_range::int::<u64>(crate::flag_range::PAGES),
        help_heading = "Limits"
    )]
    pub max_pages: Option<u64>,
    /// Cursor convention of walks that do not set one, or set the default one:
    /// `last-record:/POINTER` (into the last record of the previous page; default
    /// `last-record:/mallSn`) or `response:/POINTER` (into the previous response body)
    /// [env: MALLCHECK_CURSOR].
    #[arg(long, value_name = "RULE", help_heading = "Cases")]
    pub cursor: Option<String>,
    /// Products sweeps call exactly N malls when the list holds more (the first, the last, a
    /// deleted one and a seeded sample), instead of what --sweep-budget allows.
    #[arg(long, value_name = "N", value_parser = crate::flag_range::int::<usize>(crate::flag_range::RECORDS), help_heading = "Limits")]
    pub sample: Option<usize>,
    /// Requests one products sweep may send, its walk of the list included (default 110;
    /// profile key `sweep_budget`): every listed mall while the merchant fits, else the first,
    /// the last, a deleted one and a sample drawn with the run's seed (at least 8 malls).
    #[arg(long, value_name = "N", help_heading = "Limits")]
    pub sweep_budget: Option<usize>,
    /// Seed of the sweep's sample of malls: printed by every run that samples, a new one each
    /// run (so repeated runs cover the whole merchant); give it to replay a run's sample.
    #[arg(long, value_name = "SEED", help_heading = "Limits")]
    pub seed: Option<String>,
    /// A merchant that lists no mall (or whose malls hold no product) is expected: the run may
    /// pass although no mall record or products call (or product record) was checked (profile
    /// key `allow_empty_merchant`). Without it, such a run exits 3.
    #[arg(long, help_heading = "Cases")]
    pub allow_empty_merchant: bool,
    /// Stop the run after this many seconds, as a signal does: the reports hold the cases that
    /// finished and list the others as not run, and the run does not pass (exit 1). A service
    /// that answers every request just within --timeout cannot hold a gate for hours.
    #[arg(long, value_name = "SECS", value_parser = crate::flag_range::int::<u64>(crate::flag_range::FUZZ_SECONDS), help_heading = "Limits")]
    pub max_time: Option<u64>,
    /// Walk every page size to the end of the list and sweep every listed mall: the run's
    /// request count then grows with the merchant's data (profile key `exhaustive`).
    #[arg(long, help_heading = "Limits")]
    pub exhaustive: bool,
    /// Records read by the walks at the smaller page sizes of a bounded run, compared with the
    /// same prefix of the whole walk at the largest size (default 200; profile key
    /// `walk_prefix`).
    #[arg(long, value_name = "N", value_parser = crate::flag_range::int::<usize>(crate::flag_range::RECORDS), help_heading = "Limits")]
    pub walk_prefix: Option<usize>,
    /// Snapshot mode.
    #[arg(
        long,
        value_enum,
        value_name = "MODE",
        default_value = "check",
        help_heading = "Snapshots"
    )]
    pub snapshots: SnapshotArg,
    /// Snapshot directory.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "snapshots",
        help_heading = "Snapshots"
    )]
    pub snapshot_dir: PathBuf,
    /// Snapshot target: the snapshots live in DIR/NAME/ (default: `embedded` for the embedded
    /// server, else the profile name, else the base URL's host[_port][__path]; a URL is
    /// turned into its name).
    #[arg(long, value_name = "NAME", help_heading = "Snapshots")]
    pub snapshot_target: Option<String>,
    /// CI mode: write no pending snapshot and fail on a missing one. `CI=true` alone does not
    /// do this: a target with no recorded snapshot yet gets pending ones and the run passes.
    #[arg(long, help_heading = "Snapshots")]
    pub ci: bool,
    /// Skip the preflight: the one signed first mall-list page sent before the suite, which
    /// stops the run when the service refuses it or cannot be reached (exit 3) or breaks the
    /// contract answering it (exit 1).
    #[arg(long, help_heading = "Verdict")]
    pub no_preflight: bool,
}

/// `mallcheck serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Port on 127.0.0.1 (0 = any free port).
    #[arg(long, value_name = "N", default_value_t = 8080)]
    pub port: u16,
    /// Address to bind instead of 127.0.0.1.
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Fault mode served on the plain paths (every fault is also under /fault/NAME/).
    #[arg(long, value_name = "NAME")]
    pub fault: Option<String>,
    /// List the fault modes and exit.
    #[arg(long)]
    pub list_faults: bool,
    /// The default merchant holds N malls (at most 1,000,000), e.g. to measure a run against
    /// a merchant as large as a real one.
    #[arg(long, value_name = "N", value_parser = crate::flag_range::int::<usize>(crate::flag_range::MALLS))]
    pub malls: Option<usize>,
    /// Milliseconds added before every answer, like the latency of a remote service.
    #[arg(long, value_name = "MS", default_value_t = 0, value_parser = crate::flag_range::int::<u64>(crate::flag_range::LATENCY_MS))]
    pub latency_ms: u64,
    /// Largest cursor.count served (1 to 1,000); a larger one gets the error answer of an
    /// invalid request, like a service whose page limit is smaller than the cases' sizes.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_page_size: Option<u64>,
    /// Answer every refusal (400, 401, 404, 405) in plain text instead of the JSON envelope,
    /// as many web frameworks and gateways do: still a correct service (the spec shows no
    /// error shape).
    #[arg(long)]
    pub plain_errors: bool,
    /// Seconds a client has to send a request head, counted from connecting (first request)
    /// or from the head's first byte; slower connections are closed.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = crate::flag_range::seconds)]
    pub header_timeout: f64,
    /// Seconds the server waits for a client otherwise (between keep-alive requests, for the
    /// rest of a request body, for the client to read an answer) before closing the connection.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = crate::flag_range::seconds)]
    pub idle_timeout: f64,
    /// Connections served at once; further clients wait until one closes.
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = crate::flag_range::int::<usize>(crate::flag_range::CONNECTIONS))]
    pub max_connections: usize,
}

/// `mallcheck checks`.
#[derive(Debug, Args)]
pub struct ChecksArgs {
    /// Print the catalogue as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Which operation the fuzzer targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FuzzEndpoint {
    /// The mall list.
    MallList,
    /// The products of one mall.
    MallProducts,
    /// Both.
    All,
}

/// `mallcheck fuzz`.
#[derive(Debug, Args)]
pub struct FuzzArgs {
    /// Target service.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Operation(s) to fuzz.
    #[arg(long, value_enum, value_name = "ENDPOINT", default_value = "all")]
    pub endpoint: FuzzEndpoint,
    /// Generated request bodies per endpoint (each checked against every property).
    // `--cases N`, its old name, is kept as a hidden alias.
    #[arg(
        long = "count",
        alias = "cases",
        value_name = "N",
        default_value_t = 500,
        value_parser = crate::flag_range::int::<u32>(crate::flag_range::FUZZ_CASES)
    )]
    pub cases: u32,
    /// Seed (default: derived from the clock and printed).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Stop generating after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120, value_parser = crate::flag_range::int::<u64>(crate::flag_range::FUZZ_SECONDS))]
    pub max_time: u64,
    /// Requests per second, at most; 0 = unlimited [default: the profile's `rate`, else
    /// unlimited on loopback and 10 for other hosts] [env: MALLCHECK_RATE].
    #[arg(long, value_name = "R", value_parser = crate::flag_range::rate_or_zero)]
    pub rate: Option<f64>,
    /// Generated requests in flight at once (shrinking sends one at a time; a seed reports the
    /// same failures whatever this is).
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = crate::flag_range::int::<usize>(crate::flag_range::JOBS))]
    pub jobs: usize,
    /// JUnit XML report path.
    #[arg(long, value_name = "PATH", default_value = "reports/fuzz-junit.xml")]
    pub junit: PathBuf,
    /// Directory where minimal failing bodies are saved as case files (replayed first; `run`
    /// replays them too when the directory is under its case paths).
    #[arg(long, value_name = "DIR", default_value = "cases/fuzz-regressions")]
    pub regressions: PathBuf,
    /// Also send oversize probes: strings of up to 70,000 characters (the appid goes into the
    /// Authorization header), bodies past 64 KiB. By default requests stay within what stock
    /// HTTP layers accept (8 KiB of headers); refusals of oversize requests (413, 414, 431, a
    /// 400 that is not JSON) are listed apart and do not fail the run.
    #[arg(long)]
    pub oversize: bool,
    /// Whether a 5xx, a hang or a dropped connection on a generated request (a robustness
    /// finding, no rule of the spec) fails the run or only warns
    #[arg(long, value_enum, value_name = "GATE", default_value = "fail")]
    pub robustness: crate::checks::robustness::RobustnessGate,
    /// Colour.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,
    /// Skip the preflight: the one signed first mall-list page sent before fuzzing, which
    /// stops the run when the service refuses it or cannot be reached (exit 3).
    #[arg(long)]
    pub no_preflight: bool,
    /// A merchant that lists no mall is expected: fuzz it all the same (profile key
    /// `allow_empty_merchant`). Without it, a merchant with no mall (and none named with
    /// MALLCHECK_MALL_SN and MALLCHECK_MALL_SIGNATURE) stops the run before fuzzing, exit 3.
    #[arg(long)]
    pub allow_empty_merchant: bool,
}

/// What to do with pending snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SnapshotAction {
    /// Show each pending snapshot's diff.
    Review,
    /// Accept every pending snapshot (`.snap.new` becomes `.snap`).
    Accept,
    /// Delete every pending snapshot.
    Reject,
    /// List pending snapshots.
    Pending,
}

/// `mallcheck snapshots`.
#[derive(Debug, Args)]
pub struct SnapshotsArgs {
    /// Action.
    #[arg(value_enum)]
    pub action: SnapshotAction,
    /// Snapshot directory (the root holding one directory per target), as `run
    /// --snapshot-dir`.
    // `--dir`, its old name, is kept as a hidden alias.
    #[arg(
        long = "snapshot-dir",
        alias = "dir",
        value_name = "DIR",
        default_value = "snapshots"
    )]
    pub dir: PathBuf,
    /// Only this target's directory (a name or a base URL, as `run --snapshot-target`); it
    /// wins over --profile, which wins over --base-url. Without any: every target's directory.
    #[arg(long, value_name = "NAME")]
    pub target: Option<String>,
    /// Only the directory of the target `run --base-url URL` uses.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Only the directory of the target `run --profile NAME` uses.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
}

/// `mallcheck diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Target service (the candidate release).
    #[command(flatten)]
    pub target: TargetArgs,
    /// Snapshot directory recorded against the baseline release: the root of `run`'s
    /// per-target directories, or one target's directory itself.
    #[arg(long, value_name = "DIR", default_value = "snapshots")]
    pub baseline: PathBuf,
    /// The target the baseline was recorded against (a name or its base URL); default: the
    /// candidate's own target (same --base-url or --profile).
    #[arg(long, value_name = "NAME")]
    pub baseline_target: Option<String>,
    /// Case files or directories (default: ./cases, else the shipped cases); only cases with a
    /// snapshot are compared.
    #[arg(long = "cases", value_name = "PATH", num_args = 1..)]
    pub cases: Vec<PathBuf>,
    /// Markdown summary path (for a pull-request comment).
    #[arg(long, value_name = "PATH", default_value = "reports/diff.md")]
    pub markdown: PathBuf,
    /// JUnit XML report path.
    #[arg(long, value_name = "PATH", default_value = "reports/diff-junit.xml")]
    pub junit: PathBuf,
    /// Colour.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,
}

/// `mallcheck merge`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("output").required(true).multiple(true).args(["junit", "json"])))]
pub struct MergeArgs {
    /// Write the merged JUnit XML (from the XML inputs) here.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Write the merged JSON report (from the JSON inputs) here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Reports of several runs: JUnit XML and JSON reports, told apart by content.
    #[arg(value_name = "INPUT", required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
}

/// `mallcheck openapi`.
#[derive(Debug, Args)]
pub struct OpenapiArgs {
    /// Write the document here instead of standard output.
    #[arg(long, short, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Directory of JSON Schemas replacing the built-in ones (default: ./schemas when it holds
    /// them).
    #[arg(long, value_name = "DIR")]
    pub schemas: Option<PathBuf>,
}

/// `mallcheck validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Schema to validate against (a file of schemas/ without .json, e.g. mall-list-response).
    #[arg(long, value_name = "NAME")]
    pub schema: String,
    /// Captured JSON response bodies; `-` reads one from standard input.
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Directory of JSON Schemas replacing the built-in ones (default: ./schemas when it holds
    /// them).
    #[arg(long, value_name = "DIR")]
    pub schemas: Option<PathBuf>,
    /// Colour.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,
}

/// `mallcheck init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Directory to write into.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
}

/// `mallcheck bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Case files or directories of the suite measured (default: ./cases, else the shipped
    /// cases).
    #[arg(long = "cases", value_name = "PATH", num_args = 1..)]
    pub cases: Vec<PathBuf>,
    /// Timed rounds of each side-by-side pair; medians are compared.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = crate::flag_range::int::<usize>(crate::flag_range::ROUNDS))]
    pub rounds: usize,
    /// Cases run at once by the suite and its bare replay [default: as `run`].
    #[arg(long, value_name = "N", value_parser = crate::flag_range::int::<usize>(crate::flag_range::JOBS))]
    pub jobs: Option<usize>,
    /// Data scale factors of the scaling line (MAIN's malls and their products).
    #[arg(
        long,
        value_name = "N,N,...",
        value_delimiter = ',',
        default_values_t = [1, 10, 100],
        value_parser = crate::flag_range::int::<u32>(1..=1_000)
    )]
    pub scales: Vec<u32>,
    /// Generated requests per endpoint of the fuzz-rate line (0 skips the line).
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = crate::flag_range::int::<u32>(0..=*crate::flag_range::FUZZ_CASES.end()))]
    pub fuzz_cases: u32,
    /// Seconds of the bare concurrent loop that measures the loopback limit.
    #[arg(long, value_name = "SECS", default_value_t = 2.0, value_parser = crate::flag_range::seconds)]
    pub load_secs: f64,
    /// Only these lines, e.g. `--only a,b` [default: all of a-f].
    #[arg(long, value_name = "LINE,...", value_delimiter = ',')]
    pub only: Vec<char>,
    /// Internal: the child process of the memory line, probing this server.
    #[arg(long, value_name = "URL", hide = true)]
    pub memory_probe: Option<String>,
    /// Internal: the child process of line (b)'s load generator, sending the requests of
    /// `--load-requests` to this address over `--jobs` connections for `--load-secs`.
    #[arg(long, value_name = "ADDR", hide = true, requires = "load_requests")]
    pub load_addr: Option<std::net::SocketAddr>,
    /// Internal: the requests of the load generator's child, as `bench/load.rs` writes them.
    #[arg(long, value_name = "FILE", hide = true, requires = "load_addr")]
    pub load_requests: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
