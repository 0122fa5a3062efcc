//! `cargo xtask bench`'s command line: the runs (default and opt-in), their spellings, and the flags passed through to every run.

use crate::Error;
use std::path::PathBuf;

/// What to run, from the command line.
pub(super) struct Options {
    /// Passed through to every run (`--requests 200000` and the like).
    pub pass: Vec<String>,
    pub runs: Vec<String>,
    /// Times the run list is run, interleaved (a, b, a, b, …).
    pub repeat: usize,
    pub build: bool,
    /// Another build of the bench program (a baseline to compare with).
    pub program: Option<PathBuf>,
}

/// The runs a bench runs when `--runs` names none: `protected` (the runtime
/// over RedisStore, no-op handler), `unprotected` (ZPOPMIN → LPUSH, same
/// batching and concurrency), `memory`, `protected+aof`, `protected×3`
/// (three runtimes peeking one head), the 16 KiB runs (payloads inline and
/// stored apart, sizes capped), the cluster runs (three primaries the run
/// starts, a queue on each, or one queue), and `profile` (Redis CPU of each
/// script alone).
const ALL_RUNS: &str = "protected unprotected memory protected+aof protected×3 protected-16K \
    protected-16K-ref protected-cluster protected-cluster-1q profile";

/// The flags every run gets as given (with a value each).
const PASSED: &str = "--requests --concurrency --batch --ack-batch --poll-ms --latency-secs \
    --hold-pending --hold-inflight --window --log-filter --backlog-sizes --configured-queues \
    --busy-queues --idle-secs --answered --result-dedup-ttl";

/// Runs only `--runs` starts, as they take long: `flow` (~75 s: a stand-in
/// inference pool shared by interactive users and a gated batch backlog),
/// and the runs at scale (a backlog of 1,000,000, 200 queues idle and
/// busy, the memory an answered request still holds).
const OPT_IN_RUNS: &str = "flow backlog queues answered-memory";

const USAGE: &str = "cargo xtask bench [--requests N] [--concurrency N] [--batch N] [--ack-batch N] \
     [--poll-ms N] [--latency-secs S] [--hold-pending N] [--hold-inflight N] [--window N] [--log-filter DIRECTIVE (JSON logs to nowhere, as in a pod)] \
     [--runs protected,unprotected,memory,protected+aof,protected×3,protected-16k,protected-16k-ref,protected-cluster,protected-cluster-1q,profile,flow,backlog,queues,answered-memory] \
     [--backlog-sizes N,N] [--configured-queues N] [--busy-queues N] [--idle-secs S] [--answered N] [--result-dedup-ttl S] \
     [--repeat N (the runs N times, interleaved; medians printed)] [--no-build] \
     [--program PATH (another build of the bench binary, e.g. a baseline; implies --no-build)]";

/// Run names as typed (ASCII spellings accepted) to their table names.
fn canonical(run: &str) -> String {
    match run {
        "protected-x3" | "protectedx3" | "replicas" => "protected×3".to_owned(),
        "protected-aof" | "aof" => "protected+aof".to_owned(),
        "protected-16k" | "16k" => "protected-16K".to_owned(),
        "protected-16k-ref" | "16k-ref" => "protected-16K-ref".to_owned(),
        "cluster" => "protected-cluster".to_owned(),
        "cluster-1q" => "protected-cluster-1q".to_owned(),
        "answered" | "memory-answered" => "answered-memory".to_owned(),
        other => other.to_owned(),
    }
}

pub(super) fn parse(args: Vec<String>) -> Result<Options, Error> {
    let mut options = Options {
        pass: Vec::new(),
        runs: ALL_RUNS.split_whitespace().map(str::to_owned).collect(),
        repeat: 1,
        build: true,
        program: None,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_owned(), Some(v.to_owned())),
            None => (arg.clone(), None),
        };
        let valued = ["--program", "--runs", "--repeat"].contains(&flag.as_str())
            || PASSED.split_whitespace().any(|f| f == flag);
        let value = match inline.or_else(|| valued.then(|| args.next()).flatten()) {
            Some(value) if valued => value,
            _ if valued => return Err(Error::Usage(format!("`{flag}` needs a value"))),
            _ if flag == "--no-build" => {
                options.build = false;
                continue;
            }
            _ => {
                let why = format!("bench: unexpected argument `{arg}`\n  {USAGE}");
                return Err(Error::Usage(why));
            }
        };
        match flag.as_str() {
            "--program" => {
                options.program = Some(PathBuf::from(value));
                options.build = false;
            }
            "--runs" => {
                options.runs = value.split(',').map(canonical).collect();
                let known = ALL_RUNS
                    .split_whitespace()
                    .chain(OPT_IN_RUNS.split_whitespace());
                let known = |r: &&String| known.clone().any(|k| k == r.as_str());
                if let Some(bad) = options.runs.iter().find(|r| !known(r)) {
                    return Err(Error::Usage(format!("bench: unknown run `{bad}`")));
                }
            }
            "--repeat" => {
                let repeat = value.parse().ok().filter(|n| *n > 0);
                let why =
                    || Error::Usage(format!("`--repeat {value}`: expected a positive number"));
                options.repeat = repeat.ok_or_else(why)?;
            }
            _ => options.pass.extend([flag, value]),
        }
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owned_args;

    #[test]
    fn the_flow_run_and_the_runs_at_scale_run_only_when_asked_for() {
        let default = parse(Vec::new()).ok().expect("no flags");
        for opt_in in OPT_IN_RUNS.split_whitespace() {
            assert!(!default.runs.iter().any(|r| r == opt_in), "{opt_in}");
        }
        let scale = parse(owned_args("--runs backlog,queues,answered --answered 500"))
            .ok()
            .expect("valid flags");
        assert_eq!(scale.runs, owned_args("backlog queues answered-memory"));
        assert_eq!(scale.pass, owned_args("--answered 500"));
        let asked = parse(owned_args("--runs flow")).ok().expect("valid flags");
        assert_eq!(asked.runs, owned_args("flow"));
    }

    #[test]
    fn runs_repeat_interleaved_and_the_16k_spellings_are_accepted() {
        let options = parse(owned_args(
            "--runs protected,16k,protected-16k-ref --repeat 3",
        ))
        .ok()
        .expect("valid flags");
        assert_eq!(options.repeat, 3);
        assert_eq!(
            options.runs,
            owned_args("protected protected-16K protected-16K-ref")
        );
        assert!(parse(owned_args("--repeat 0")).is_err());
    }
}
