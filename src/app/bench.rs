//! `mallcheck bench`: validates the flags and runs the bench lines (or, with the hidden
//! `--memory-probe`, the child of line (d); with `--load-addr`, the load generator of line (b)).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::app::run::load_cases;
use crate::bench::harness::{BenchOptions, SuiteEnv, banner, embedded_target, measure_all};
use crate::bench::measure::{Goal, Verdict, print};
use crate::bench::validation::{PAGE_MALLS, RESPONSE_PRODUCTS};
use crate::bench::{load_child, memory};
use crate::cli::BenchArgs;
use crate::error::UsageError;
use crate::exit;
use crate::redact::Redactor;
use crate::runner::RunOptions;
use crate::session::Session;
use crate::settings::Env;
use crate::spec::schemas::SchemaSet;

/// Runs `mallcheck bench` (or, with the hidden `--memory-probe`, the child of line (d)).
pub fn bench(args: BenchArgs, redactor: &Redactor) -> Result<i32, UsageError> {
    if let Some(url) = &args.memory_probe {
        let target = embedded_target(redactor)?;
        let schemas = SchemaSet::embedded()?;
        return Ok(super::runtime()?.block_on(memory::probe(url, &target, &schemas, redactor)));
    }
    if let (Some(addr), Some(file)) = (args.load_addr, &args.load_requests) {
        let time = Duration::from_secs_f64(args.load_secs);
        let jobs = args.jobs.unwrap_or(RunOptions::default().jobs);
        return Ok(super::runtime()?.block_on(load_child::child(addr, file, jobs, time)));
    }
    if args.rounds == 0 {
        return Err(UsageError::setting("--rounds", "must be at least 1", None));
    }
    if args.jobs == Some(0) {
        return Err(UsageError::setting("--jobs", "must be at least 1", None));
    }
    if args.scales.iter().any(|&s| s == 0 || s > 1_000) {
        return Err(UsageError::setting(
            "--scales",
            "every factor must be between 1 and 1000",
            Some("e.g. --scales 1,10,100"),
        ));
    }
    if !(args.load_secs.is_finite() && args.load_secs > 0.0 && args.load_secs <= 60.0) {
        return Err(UsageError::setting(
            "--load-secs",
            "must be a number of seconds in (0, 60]",
            None,
        ));
    }
    if let Some(c) = args.only.iter().find(|c| !('a'..='f').contains(*c)) {
        return Err(UsageError::setting(
            "--only",
            format!("there is no line ({c})"),
            Some("the lines are a, b, c, d, e and f, e.g. --only a,b"),
        ));
    }
    let options = BenchOptions {
        cases: args.cases.clone(),
        rounds: args.rounds,
        jobs: args.jobs.unwrap_or(RunOptions::default().jobs),
        scales: args.scales.clone(),
        fuzz_cases: args.fuzz_cases,
        load_time: Duration::from_secs_f64(args.load_secs),
        page_malls: PAGE_MALLS,
        response_products: RESPONSE_PRODUCTS,
        only: args.only.clone(),
    };
    let target = embedded_target(redactor)?;
    let load_started = Instant::now();
    let schemas = Arc::new(SchemaSet::embedded()?);
    let load_time = load_started.elapsed();
    let compile_started = Instant::now();
    schemas.compile_all();
    let compile_time = compile_started.elapsed();
    // Bad case files end the bench before anything is measured (exit 2), when a line runs them.
    if ['a', 'e', 'f'].iter().any(|&line| options.wants(line)) {
        let session = Session::from_parts(
            target.clone(),
            Env::default(),
            Arc::clone(&schemas),
            redactor,
        );
        load_cases(&options.cases, &session)?;
    }
    print(&banner(load_time, compile_time));
    let env = SuiteEnv {
        target,
        redactor: redactor.clone(),
        schemas,
        cases: options.cases.clone(),
        jobs: options.jobs,
    };
    let lines = super::runtime()?.block_on(measure_all(&env, &options));
    let mut misses = 0;
    for line in &lines {
        if line.verdict() == Verdict::Miss {
            misses += 1;
        }
    }
    print(&format!(
        "\n{} of {} targets hold; figures are ratios of runs made side by side in this process\n",
        lines
            .iter()
            .filter(|l| l.verdict() == Verdict::Pass)
            .count(),
        lines.iter().filter(|l| l.goal != Goal::Informative).count(),
    ));
    if misses > 0 {
        print("a MISS is a finding of the bench, not an error: the exit code stays 0\n");
    }
    Ok(exit::PASS)
}
