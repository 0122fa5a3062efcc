//! `cargo xtask bench`: the protected pipeline beside the unprotected dequeue it replaces, on private redis-servers.
//!
//! Builds the `bench` binary of the harness crate (`xtask/harness`) in
//! release mode, starts two redis-servers of its own on free loopback ports
//! (no persistence, and AOF with `appendfsync everysec`), then runs that
//! binary once per run, each
//! in a fresh process so the worker RSS is that run's own:
//!
//! - `protected`: the runtime over RedisStore, no-op handler;
//! - `unprotected`: ZPOPMIN → LPUSH with the same batching and concurrency;
//! - `memory`: the runtime over MemoryStore;
//! - `protected+aof`: `protected` on the AOF server;
//! - `protected×3`: three runtimes peeking the same head;
//! - `profile`: Redis CPU of each script called on its own.
//!
//! Each run prints a `row` line (`key=value`) and a `json` line; this module
//! prints the table, the protected/unprotected ratio and writes every
//! figure to `target/bench/latest.json` and a timestamped copy.

mod server;

use crate::{Error, Shown, cargo, project_root, run_inherit};
use server::Server;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Table columns: header, row key, and how to show the value.
const COLUMNS: [(&str, &str); 13] = [
    ("jobs/s", "jobs_per_s"),
    ("p50 ms", "p50_ms"),
    ("p99 ms", "p99_ms"),
    ("Redis µs/job", "redis_cpu_us_per_job"),
    ("calls/job", "redis_calls_per_job"),
    ("RT/job", "round_trips_per_job"),
    ("B/claim", "claim_bytes"),
    ("member B", "member_bytes"),
    ("RSS MiB", "rss_mib"),
    ("worker µs/job", "worker_cpu_us_per_job"),
    ("lost", "lost_claims"),
    ("wasted RT", "wasted_round_trips"),
    ("busy", "machine_busy"),
];

/// What to run, from the command line.
struct Options {
    /// Passed through to every run (`--requests 200000` and the like).
    pass: Vec<String>,
    runs: Vec<String>,
    build: bool,
    /// Another build of the bench program (a baseline to compare with).
    program: Option<PathBuf>,
}

const ALL_RUNS: [&str; 6] = [
    "protected",
    "unprotected",
    "memory",
    "protected+aof",
    "protected×3",
    "profile",
];

const USAGE: &str = "cargo xtask bench [--requests N] [--concurrency N] [--batch N] [--ack-batch N] \
     [--poll-ms N] [--latency-secs S] [--hold-pending N] [--hold-inflight N] [--window N] \
     [--runs protected,unprotected,memory,protected+aof,protected×3,profile] [--no-build] \
     [--program PATH (another build of the bench binary, e.g. a baseline; implies --no-build)]";

/// Run names as typed (ASCII spellings accepted) to their table names.
fn canonical(run: &str) -> String {
    match run {
        "protected-x3" | "protectedx3" | "replicas" => "protected×3".to_owned(),
        "protected-aof" | "aof" => "protected+aof".to_owned(),
        other => other.to_owned(),
    }
}

fn parse(args: Vec<String>) -> Result<Options, Error> {
    let mut options = Options {
        pass: Vec::new(),
        runs: ALL_RUNS.iter().map(|s| s.to_string()).collect(),
        build: true,
        program: None,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) => (f.to_owned(), Some(v.to_owned())),
            None => (arg.clone(), None),
        };
        match flag.as_str() {
            "--no-build" => options.build = false,
            "--program" => {
                let value = match inline {
                    Some(v) => v,
                    None => args
                        .next()
                        .ok_or_else(|| Error::Usage("`--program` needs a path".into()))?,
                };
                options.program = Some(PathBuf::from(value));
                options.build = false;
            }
            "--runs" | "--requests" | "--concurrency" | "--batch" | "--ack-batch" | "--poll-ms"
            | "--latency-secs" | "--hold-pending" | "--hold-inflight" | "--window" => {
                let value = match inline {
                    Some(v) => v,
                    None => args
                        .next()
                        .ok_or_else(|| Error::Usage(format!("`{flag}` needs a value")))?,
                };
                if flag == "--runs" {
                    options.runs = value.split(',').map(canonical).collect();
                    if let Some(bad) = options
                        .runs
                        .iter()
                        .find(|r| !ALL_RUNS.contains(&r.as_str()))
                    {
                        return Err(Error::Usage(format!("bench: unknown run `{bad}`")));
                    }
                } else {
                    options.pass.extend([flag, value]);
                }
            }
            _ => {
                return Err(Error::Usage(format!(
                    "bench: unexpected argument `{arg}`\n  {USAGE}"
                )));
            }
        }
    }
    Ok(options)
}

pub(crate) fn run(args: Vec<String>) -> Result<(), Error> {
    let options = parse(args)?;
    let started = Instant::now();
    if options.build {
        let mut build = cargo(&["build", "--release", "-p", "harness", "--bin", "bench"]);
        eprintln!("xtask: {}", Shown(&build));
        run_inherit(&mut build)?;
    }
    let program = options
        .program
        .clone()
        .unwrap_or_else(|| project_root().join("target/release/bench"));
    if !program.is_file() {
        return Err(Error::Failed(format!(
            "{} is missing: run without --no-build",
            program.display()
        )));
    }
    let out_dir = project_root().join("target/bench");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", out_dir.display())))?;
    let plain = Server::start(&out_dir, false)?;
    let needs_aof = options.runs.iter().any(|r| r == "protected+aof");
    let aof = if needs_aof {
        Some(Server::start(&out_dir, true)?)
    } else {
        None
    };
    let mut rows: Vec<Vec<(String, String)>> = Vec::new();
    let mut json: Vec<String> = Vec::new();
    let mut steps: Vec<String> = Vec::new();
    let mut settings = None;
    for name in &options.runs {
        let (kind, server) = match name.as_str() {
            "protected+aof" => ("protected", aof.as_ref().unwrap_or(&plain)),
            "protected×3" => ("replicas", &plain),
            other => (other, &plain),
        };
        eprintln!(
            "xtask: bench run {name} ({})",
            crate::elapsed(started.elapsed())
        );
        let mut cmd = Command::new(&program);
        cmd.arg(kind)
            .args(["--name", name, "--url", &server.url()])
            .args(&options.pass)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let output = cmd
            .output()
            .map_err(|e| Error::Failed(format!("could not start `{}`: {e}", Shown(&cmd))))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(Error::Failed(format!(
                "bench run {name} failed ({}); its output:\n{stdout}",
                output.status
            )));
        }
        for line in stdout.lines() {
            if let Some(row) = line.strip_prefix("row ") {
                rows.push(pairs(row));
            } else if let Some(j) = line.strip_prefix("json ") {
                json.push(j.to_owned());
            } else if let Some(step) = line.strip_prefix("step ") {
                steps.push(step.to_owned());
            } else if let Some(s) = line.strip_prefix("settings ") {
                settings.get_or_insert_with(|| s.to_owned());
            }
        }
    }
    drop((plain, aof));
    if let Some(s) = &settings {
        println!("\nsettings: {s}");
    }
    print_table(&rows);
    let ratio = ratio(&rows);
    if let Some(r) = ratio {
        println!("protected/unprotected jobs/s: {r:.3}");
    }
    if let Some(row) = rows.iter().find(|r| get(r, "name") == "protected") {
        let rate: Option<f64> = get(row, "jobs_per_s").parse().ok();
        let us: Option<f64> = get(row, "redis_cpu_us_per_job").parse().ok();
        if let (Some(rate), Some(us)) = (rate, us) {
            println!(
                "protected jobs/s over what its Redis CPU allows (1,000,000 / {us} µs): {:.2}",
                rate * us / 1e6
            );
        }
    }
    if !steps.is_empty() {
        println!("\nRedis CPU per item, each step alone (profile):");
        for step in &steps {
            println!("  {step}");
        }
    }
    write_json(&out_dir, &options, &program, &json, ratio)?;
    eprintln!(
        "xtask: bench finished in {}",
        crate::elapsed(started.elapsed())
    );
    Ok(())
}

fn pairs(row: &str) -> Vec<(String, String)> {
    row.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn get<'a>(row: &'a [(String, String)], key: &str) -> &'a str {
    row.iter()
        .find(|(k, _)| k == key)
        .map_or("-", |(_, v)| v.as_str())
}

fn print_table(rows: &[Vec<(String, String)>]) {
    let mut table: Vec<Vec<String>> = vec![
        std::iter::once("run".to_owned())
            .chain(COLUMNS.iter().map(|(h, _)| h.to_string()))
            .collect(),
    ];
    for row in rows {
        table.push(
            std::iter::once(get(row, "name").to_owned())
                .chain(COLUMNS.iter().map(|(_, k)| get(row, k).to_owned()))
                .collect(),
        );
    }
    let width = |i: usize| {
        table
            .iter()
            .map(|r| r[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..table[0].len()).map(width).collect();
    println!();
    for (n, row) in table.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                let pad = " ".repeat(widths[i] - cell.chars().count());
                if i == 0 {
                    format!("{cell}{pad}")
                } else {
                    format!("{pad}{cell}")
                }
            })
            .collect();
        println!("| {} |", cells.join(" | "));
        if n == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            println!("|-{}-|", rule.join("-|-"));
        }
    }
}

fn ratio(rows: &[Vec<(String, String)>]) -> Option<f64> {
    let rate = |name: &str| -> Option<f64> {
        let row = rows.iter().find(|r| get(r, "name") == name)?;
        get(row, "jobs_per_s").parse().ok()
    };
    Some(rate("protected")? / rate("unprotected")?)
}

fn write_json(
    dir: &Path,
    options: &Options,
    program: &Path,
    runs: &[String],
    ratio: Option<f64>,
) -> Result<(), Error> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let commit = Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .current_dir(project_root())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let args: Vec<String> = options.pass.iter().map(|a| format!("{a:?}")).collect();
    let text = format!(
        "{{\"unix_time\":{secs},\"commit\":\"{commit}\",\"program\":{:?},\"args\":[{}],\
         \"protected_over_unprotected\":{},\"runs\":[\n{}\n]}}\n",
        program.display().to_string(),
        args.join(","),
        ratio.map_or("null".to_owned(), |r| format!("{r:.4}")),
        runs.join(",\n")
    );
    for name in ["latest.json".to_owned(), format!("bench-{secs}.json")] {
        let path = dir.join(&name);
        std::fs::write(&path, &text)
            .map_err(|e| Error::Failed(format!("cannot write {}: {e}", path.display())))?;
    }
    println!("\nfigures: target/bench/latest.json, target/bench/bench-{secs}.json");
    Ok(())
}
