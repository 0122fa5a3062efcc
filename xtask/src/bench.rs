//! `cargo xtask bench`: the protected pipeline beside the unprotected dequeue it replaces, on private redis-servers.
//!
//! Builds the harness's `bench` binary (`xtask/harness`) in release mode
//! (or takes another build: `--program`), starts two redis-servers of its
//! own (no persistence, and AOF with `appendfsync everysec`), then runs the
//! binary once per run (the list: [`options`]), each in a fresh process so
//! the worker RSS is that run's own. Each run prints a `row` line
//! (`key=value`) and a `json` line; this module prints the table, the
//! ratios and summaries ([`report`]), and writes every figure to
//! `target/bench/latest.json` and a timestamped copy. `--repeat N` runs the
//! list N times, interleaved, and also prints each run's medians.

mod options;
mod report;
mod table;

use crate::server::Server;
use crate::{Error, cargo, project_root, run_inherit, shown, target_dir};
use options::{Options, parse};
use report::{print_payload_keys_left, print_summaries, ratio, write_json};
use std::process::{Command, Stdio};
use std::time::Instant;
use table::{FLOW_COLUMNS, Row, is_flow, medians, pairs, print_columns, print_table};

pub(crate) fn run(args: Vec<String>) -> Result<(), Error> {
    let options = parse(args)?;
    let started = Instant::now();
    if options.build {
        let mut build = cargo("build --release -p harness --bin bench");
        eprintln!("xtask: {}", shown(&build));
        run_inherit(&mut build)?;
    }
    let program = options
        .program
        .clone()
        .unwrap_or_else(|| target_dir().join("release/bench"));
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
    let aof = needs_aof
        .then(|| Server::start(&out_dir, true))
        .transpose()?;
    let mut rows: Vec<Row> = Vec::new();
    let mut json: Vec<String> = Vec::new();
    let mut steps: Vec<String> = Vec::new();
    let mut settings = None;
    let schedule: Vec<&String> = (0..options.repeat).flat_map(|_| &options.runs).collect();
    for name in schedule {
        let (kind, server) = match name.as_str() {
            "protected+aof" => ("protected", aof.as_ref()),
            "protected×3" => ("replicas", Some(&plain)),
            "protected-16K" | "protected-16K-ref" => ("protected", Some(&plain)),
            "answered-memory" => ("answered", Some(&plain)),
            // The cluster runs start their own cluster: no server here.
            "protected-cluster" | "protected-cluster-1q" => ("cluster", None),
            other => (other, Some(&plain)),
        };
        let target = match server {
            Some(server) => vec!["--url".to_owned(), server.url()],
            None => report::queues_arg(name),
        };
        let at = crate::elapsed(started.elapsed());
        eprintln!("xtask: bench run {name} ({at})");
        let mut cmd = Command::new(&program);
        cmd.arg(kind)
            .args(["--name", name])
            .args(&target)
            .args(pass_for(name, &options.pass))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let output = cmd
            .output()
            .map_err(|e| Error::Failed(format!("could not start `{}`: {e}", shown(&cmd))))?;
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
    let (flow, rows): (Vec<Row>, Vec<Row>) = rows.into_iter().partition(|r| is_flow(r));
    if !rows.is_empty() {
        print_table(&rows);
    }
    if !flow.is_empty() {
        println!("\nflow (goal: utilization >= 0.9, interactive p99 wait <= 1.2x no-batch's):");
        print_columns(&FLOW_COLUMNS, &flow);
    }
    print_payload_keys_left(&rows);
    let rows = if options.repeat > 1 {
        let medians = medians(&rows);
        let rounds = options.repeat;
        println!("\nmedians per run ({rounds} rounds, interleaved):");
        print_table(&medians);
        medians
    } else {
        rows
    };
    print_summaries(&rows);
    if !steps.is_empty() {
        println!("\nRedis CPU per item, each step alone (profile):");
        for step in &steps {
            println!("  {step}");
        }
    }
    write_json(&out_dir, &options, &program, &json, ratio(&rows))?;
    let took = crate::elapsed(started.elapsed());
    eprintln!("xtask: bench finished in {took}");
    Ok(())
}

/// The 16 KiB runs' payload size.
const LARGE_PAYLOAD: usize = 16 * 1024;
/// Caps on the 16 KiB runs' sizes, so Redis holds at most ~1 GB of
/// payloads: requests drained, and requests pending in the hold phase.
const LARGE_REQUESTS: usize = 50_000;
const LARGE_HOLD_PENDING: usize = 10_000;

/// The arguments a run gets: the pass-through flags, and for the 16 KiB
/// runs the payload flags with the sizes capped (see [`LARGE_REQUESTS`]).
fn pass_for(name: &str, pass: &[String]) -> Vec<String> {
    let by_reference = match name {
        "protected-16K" => false,
        "protected-16K-ref" => true,
        _ => return pass.to_vec(),
    };
    let value = |flag: &str, default: usize| {
        let at = pass.iter().position(|a| a == flag);
        at.and_then(|i| pass.get(i + 1)?.parse().ok())
            .unwrap_or(default)
    };
    let requests = value("--requests", 200_000).min(LARGE_REQUESTS);
    let hold_pending = value("--hold-pending", 100_000).min(LARGE_HOLD_PENDING);
    let capped = |pair: &&[String]| pair[0] != "--requests" && pair[0] != "--hold-pending";
    let mut out: Vec<String> = pass.chunks(2).filter(capped).flatten().cloned().collect();
    let sizes = format!("--requests {requests} --hold-pending {hold_pending}");
    let payload = format!("--payload-bytes {LARGE_PAYLOAD}");
    out.extend(
        [sizes, payload]
            .iter()
            .flat_map(|s| s.split(' '))
            .map(str::to_owned),
    );
    if by_reference {
        out.push("--by-reference".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owned_args;

    #[test]
    fn the_16k_runs_get_payload_flags_and_capped_sizes_and_other_runs_the_flags_as_given() {
        let pass = owned_args("--requests 100000 --batch 50");
        assert_eq!(pass_for("protected", &pass), pass);
        assert_eq!(
            pass_for("protected-16K-ref", &pass),
            owned_args(
                "--batch 50 --requests 50000 --hold-pending 10000 --payload-bytes 16384 --by-reference"
            )
        );
        let small = owned_args("--requests 20000 --hold-pending 500");
        assert_eq!(
            pass_for("protected-16K", &small),
            owned_args("--requests 20000 --hold-pending 500 --payload-bytes 16384")
        );
    }
}
