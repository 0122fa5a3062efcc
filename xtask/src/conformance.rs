//! `cargo xtask conformance [--store memory|redis|redis-tagged|redis-cluster|all] [-- <test args>]`:
//! the ClaimStore conformance suite on each chosen store, as `cargo test`
//! runs it, with a summary line per store.
//!
//! Each store runs the suite as a libtest-mimic (`harness = false`) test
//! target of its crate: `conformance`; the Redis store also
//! `conformance_tagged` (the cluster key layout on one server) and
//! `conformance_cluster` (a real local Redis Cluster). The targets are
//! `test = false`, so `cargo test --workspace` leaves them to this command.
//! Each runs as `cargo test --workspace --exclude <the other store's crate>
//! --test <target>`: the workspace's features, so nothing the test step
//! built rebuilds, and `--exclude` keeps the other crate's target of the
//! same name from running. Arguments after `--` go to libtest (a name
//! filter, say), and libtest's output passes through; its `test
//! <pass>::<file>::<check> ... ok` lines are counted per pass (`plain`,
//! `through_faults`, `server_time`, `admin`, `model_based`), and each
//! store closes with `<store>: N passed, N failed`. A store on which no
//! plain check ran fails.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::{Error, cargo, is_ci, on_path, shown};

/// A backend with a conformance test target: its name, its crate, and the
/// test target (`tests/<target>.rs`) that runs the suite.
type Store = (&'static str, &'static str, &'static str);

pub(crate) const STORES: [Store; 4] = [
    ("memory", "claim-memory", "conformance"),
    ("redis", "claim-redis", "conformance"),
    // The hash-tagged (cluster) key layout on one server, every call
    // slot-checked by the store.
    ("redis-tagged", "claim-redis", "conformance_tagged"),
    // A real local Redis Cluster: three primaries with a replica each.
    ("redis-cluster", "claim-redis", "conformance_cluster"),
];

pub(crate) fn run_cli(args: Vec<String>) -> Result<(), Error> {
    let mut which = None;
    let mut args = args.into_iter();
    let mut test_args = Vec::new();
    while let Some(arg) = args.next() {
        if arg == "--" {
            test_args.extend(args.by_ref());
            break;
        }
        let value = match arg.strip_prefix("--store=") {
            Some(v) => v.to_owned(),
            None if arg == "--store" => args.next().unwrap_or_default(),
            None => {
                return Err(Error::Usage(format!(
                    "conformance: unexpected argument `{arg}`"
                )));
            }
        };
        which = Some(value);
    }
    let stores = select(which.as_deref().unwrap_or("all"))?;
    run(&stores, &[], &test_args)
}

fn select(which: &str) -> Result<Vec<Store>, Error> {
    match STORES.iter().find(|s| s.0 == which) {
        _ if which == "all" => Ok(STORES.to_vec()),
        Some(store) => Ok(vec![*store]),
        None => Err(Error::Usage(format!(
            "unknown store `{which}`: expected memory, redis, redis-tagged, redis-cluster or all"
        ))),
    }
}

/// Runs the suite for every store (all of them, even after a failure), with
/// `cargo_args` for cargo (such as `--locked`) and `test_args` for libtest;
/// fails if any store failed.
pub(crate) fn run(
    stores: &[Store],
    cargo_args: &[&str],
    test_args: &[String],
) -> Result<(), Error> {
    let (mut failures, mut total) = (Vec::new(), [0, 0]);
    for &(name, krate, target) in stores {
        println!("== conformance: {name}");
        // Without redis-server the Redis suites skip (with `CI` set they fail).
        if krate == "claim-redis" && on_path("redis-server").is_none() && !is_ci() {
            println!("skipped: redis-server not on PATH");
            continue;
        }
        // The other crate, whose target of the same name must not run.
        let other = STORES.iter().find(|s| s.1 != krate).map_or("", |s| s.1);
        let mut cmd = cargo(&format!(
            "test --workspace --test {target} --exclude {other}"
        ));
        cmd.args(cargo_args).arg("--").args(test_args);
        cmd.env_remove("PROPTEST_CASES");
        println!("--> {}", shown(&cmd));
        let ([passed, failed], verdict) = run_store(name, &mut cmd);
        total = [total[0] + passed, total[1] + failed];
        if let Err(reason) = verdict {
            failures.push(format!("{name}: {reason}"));
        }
    }
    if stores.len() > 1 {
        let names: Vec<_> = stores.iter().map(|s| s.0).collect();
        println!("== conformance total over {}", names.join(", "));
        println!("{} passed, {} failed", total[0], total[1]);
    }
    match failures.is_empty() {
        true => Ok(()),
        false => Err(Error::Failed(format!(
            "conformance failed: {}",
            failures.join("; ")
        ))),
    }
}

/// Passes one store's test output through, counting its results (passed,
/// failed) per pass; returns the counts over all passes and whether the
/// store passed.
fn run_store(store: &str, cmd: &mut Command) -> ([u64; 2], Result<(), String>) {
    let mut child = match cmd.stdout(Stdio::piped()).spawn() {
        Ok(child) => child,
        Err(e) => return ([0, 0], Err(format!("could not start: {e}"))),
    };
    let mut passes: BTreeMap<String, [u64; 2]> = BTreeMap::new();
    let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
    for line in stdout.split(b'\n').map_while(Result::ok) {
        let text = String::from_utf8_lossy(&line);
        println!("{}", text.trim_end_matches('\r'));
        if let Some((pass, passed)) = parse_outcome(&text) {
            passes.entry(pass.to_owned()).or_default()[usize::from(!passed)] += 1;
        }
    }
    let mut all = [0, 0];
    for (pass, [passed, failed]) in &passes {
        let name = pass.replace('_', " ");
        println!("{store} {name}: {passed} passed, {failed} failed");
        all = [all[0] + passed, all[1] + failed];
    }
    println!("{store}: {} passed, {} failed", all[0], all[1]);
    let plain = passes.get("plain").copied().unwrap_or_default();
    let verdict = match child.wait() {
        Err(e) => Err(format!("waiting for the test: {e}")),
        Ok(_) if plain == [0, 0] => {
            Err("no plain check ran (a filter that matches nothing, or a build failure?)".into())
        }
        Ok(status) if all[1] > 0 => Err(format!("{} trial(s) failed ({status})", all[1])),
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("the test did not run to the end ({status})")),
    };
    (all, verdict)
}

/// Reads `test <pass>::<check> ... ok` (or `FAILED`; libtest-mimic pads
/// the name with spaces) as the pass and whether it passed; other lines,
/// and trials outside a pass, are not check results.
fn parse_outcome(line: &str) -> Option<(&str, bool)> {
    let (name, result) = line.strip_prefix("test ")?.split_once(" ... ")?;
    let (pass, _check) = name.trim_end().split_once("::")?;
    match result.trim() {
        "ok" => Some((pass, true)),
        "FAILED" => Some((pass, false)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_selection() {
        assert!(matches!(select("sqlite"), Err(Error::Usage(_))));
        assert!(matches!(select("--all"), Err(Error::Usage(_))));
    }

    #[test]
    fn check_lines_are_read_from_libtest_output() {
        assert_eq!(
            parse_outcome("test plain::acks::acking_twice_pushes_exactly_one_record    ... ok"),
            Some(("plain", true))
        );
        let failed =
            parse_outcome("test through_faults::claims::peek_honours_offset_and_limit ... FAILED");
        assert_eq!(failed, Some(("through_faults", false)));
        assert_eq!(parse_outcome("test result: ok. 106 passed; 0 failed"), None);
        assert_eq!(parse_outcome("running 106 tests"), None);
        assert_eq!(parse_outcome("test plain::x ... ignored"), None);
    }
}
