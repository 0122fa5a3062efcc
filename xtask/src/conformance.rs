//! `cargo xtask conformance [--store memory|redis|redis-tagged|redis-cluster|all]`:
//! runs the ClaimStore conformance suite against each chosen store.
//!
//! Each store runs the suite as a test target of its crate: `conformance`
//! (`tests/conformance.rs`, one `claim_conformance::conformance_tests!` line); the
//! Redis store also as `conformance_tagged` (the cluster key layout on one
//! server) and `conformance_cluster` (a real local Redis Cluster), in
//! which every check is a test: `plain::<check>`, `through_faults::<check>`,
//! `admin::<check>` (the operator's operations), and on Redis
//! `server_time::<check>`. This reads libtest's output as it
//! streams and prints `ok   <check>` or `FAIL <check>` per check, the
//! failures' messages as libtest gives them, one `<pass>: N passed, N
//! failed` line per other pass, and closes with the plain pass's `N passed,
//! N failed` (the count that must be equal across stores). A store exists
//! once its crate has that file. Arguments after `--` go to the test binary
//! (a name filter, say); a run in which no plain check executed fails.

use std::{
    collections::BTreeMap,
    io::{BufRead, BufReader},
    process::{Command, Stdio},
};

use crate::{Error, Shown, cargo, project_root};

/// A backend with a conformance test target.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) name: &'static str,
    krate: &'static str,
    /// The test target (`tests/<target>.rs`) that runs the suite.
    target: &'static str,
    /// A server binary the suite needs on PATH; without it (outside CI)
    /// every test returns at once, so the store counts as skipped.
    needs: Option<&'static str>,
}

const STORES: [Store; 4] = [
    Store {
        name: "memory",
        krate: "claim-memory",
        target: "conformance",
        needs: None,
    },
    Store {
        name: "redis",
        krate: "claim-redis",
        target: "conformance",
        needs: Some("redis-server"),
    },
    // The hash-tagged (cluster) key layout on one server, every call
    // slot-checked by the store.
    Store {
        name: "redis-tagged",
        krate: "claim-redis",
        target: "conformance_tagged",
        needs: Some("redis-server"),
    },
    // A real local Redis Cluster: three primaries with a replica each.
    Store {
        name: "redis-cluster",
        krate: "claim-redis",
        target: "conformance_cluster",
        needs: Some("redis-server"),
    },
];

impl Store {
    /// True when the suite would skip: its server is missing and `CI` is
    /// unset (with `CI` set the suite fails instead).
    fn skips(&self) -> bool {
        let Some(binary) = self.needs else {
            return false;
        };
        let on_path = std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(binary).is_file()));
        !on_path && std::env::var_os("CI").is_none_or(|v| v.is_empty())
    }

    fn exists(&self) -> bool {
        project_root()
            .join(self.krate)
            .join(format!("tests/{}.rs", self.target))
            .is_file()
    }
}

/// Stores whose crate has their test target, in a fixed order.
pub(crate) fn existing() -> Vec<&'static Store> {
    STORES.iter().filter(|s| s.exists()).collect()
}

pub(crate) fn run_cli(args: Vec<String>) -> Result<(), Error> {
    let mut which = None;
    let mut args = args.into_iter();
    let mut passed = Vec::new();
    while let Some(arg) = args.next() {
        if arg == "--" {
            passed.extend(args.by_ref());
            break;
        }
        let value = match arg.strip_prefix("--store=") {
            Some(v) => v.to_owned(),
            None if arg == "--store" => args.next().ok_or_else(|| {
                Error::Usage(
                    "`--store` needs a value: memory, redis, redis-tagged, redis-cluster or all"
                        .into(),
                )
            })?,
            None => {
                return Err(Error::Usage(format!(
                    "conformance: unexpected argument `{arg}`"
                )));
            }
        };
        which = Some(value);
    }
    let stores = select(which.as_deref().unwrap_or("all"))?;
    let mut extra: Vec<&str> = Vec::new();
    if !passed.is_empty() {
        extra.push("--");
        extra.extend(passed.iter().map(String::as_str));
    }
    run(&stores, &extra)
}

fn select(which: &str) -> Result<Vec<&'static Store>, Error> {
    if which == "all" {
        let stores = existing();
        if stores.is_empty() {
            return Err(Error::Failed(
                "no store has a conformance suite yet (no claim-*/tests/conformance*.rs)".into(),
            ));
        }
        return Ok(stores);
    }
    let store = STORES.iter().find(|s| s.name == which).ok_or_else(|| {
        Error::Usage(format!(
            "unknown store `{which}`: expected memory, redis, redis-tagged, redis-cluster or all"
        ))
    })?;
    if !store.exists() {
        return Err(Error::Invalid(format!(
            "store `{which}` has no conformance suite yet: {}/tests/{}.rs does not exist",
            store.krate, store.target
        )));
    }
    Ok(vec![store])
}

/// Runs the suite for every store (all of them, even after a failure), with
/// `extra` cargo arguments such as `--locked`; fails if any store failed.
pub(crate) fn run(stores: &[&Store], extra: &[&str]) -> Result<(), Error> {
    let mut failures = Vec::new();
    let mut total = Tally::default();
    for store in stores {
        let mut cmd = cargo(&["test", "-p", store.krate, "--test", store.target]);
        cmd.args(extra).env_remove("PROPTEST_CASES");
        println!("== conformance: {} ({})", store.name, Shown(&cmd));
        if store.skips() {
            println!(
                "skipped: {} not on PATH",
                store.needs.unwrap_or("its server")
            );
            continue;
        }
        let (plain, verdict) = run_store(&mut cmd);
        total.passed += plain.passed;
        total.failed += plain.failed;
        if let Err(reason) = verdict {
            failures.push(format!("{}: {reason}", store.name));
        }
    }
    if stores.len() > 1 {
        let names: Vec<_> = stores.iter().map(|s| s.name).collect();
        println!("== conformance total over {}", names.join(", "));
        println!("{} passed, {} failed", total.passed, total.failed);
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Error::Failed(format!(
            "conformance failed: {}",
            failures.join("; ")
        )))
    }
}

/// Checks passed and failed in one pass.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    passed: u64,
    failed: u64,
}

/// Streams one store's test output as per-check lines; returns the plain
/// pass's counts and whether the store passed.
fn run_store(cmd: &mut Command) -> (Tally, Result<(), String>) {
    let mut passes: BTreeMap<String, Tally> = BTreeMap::new();
    let mut child = match cmd.stdout(Stdio::piped()).spawn() {
        Ok(child) => child,
        Err(e) => {
            let why = format!("could not start `{}`: {e}", Shown(cmd));
            return (Tally::default(), Err(why));
        }
    };
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut line = Vec::new();
    let mut in_failures = false;
    loop {
        line.clear();
        match stdout.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                let plain = passes.get(PLAIN).copied().unwrap_or_default();
                return (plain, Err(format!("reading test output: {e}")));
            }
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if let Some(outcome) = parse_outcome(text) {
            let tally = passes.entry(outcome.pass.to_owned()).or_default();
            let (mark, note) = match outcome.passed {
                true => ("ok  ", ""),
                false => ("FAIL", " (message below)"),
            };
            match outcome.passed {
                true => tally.passed += 1,
                false => tally.failed += 1,
            }
            let pass = match outcome.pass {
                PLAIN => String::new(),
                other => format!(" [{}]", other.replace('_', " ")),
            };
            println!("{mark} {}{pass}{note}", outcome.check);
        } else {
            // libtest's failure messages follow `failures:`; keep them whole.
            in_failures |= text == "failures:";
            if in_failures || text.starts_with("error") || text.starts_with("test result") {
                println!("{text}");
            }
        }
    }
    let plain = passes.get(PLAIN).copied().unwrap_or_default();
    for (pass, tally) in passes.iter().filter(|(p, _)| p.as_str() != PLAIN) {
        let name = pass.replace('_', " ");
        println!("{name}: {} passed, {} failed", tally.passed, tally.failed);
    }
    println!("{} passed, {} failed", plain.passed, plain.failed);
    let failed: u64 = passes.values().map(|t| t.failed).sum();
    let verdict = match child.wait() {
        Err(e) => Err(format!("waiting for the test: {e}")),
        Ok(_) if plain.passed + plain.failed == 0 => {
            Err("no check ran (a filter that matches nothing?)".into())
        }
        Ok(status) if failed > 0 => Err(format!("{failed} check(s) failed ({status})")),
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!(
            "the test did not build or did not run to the end ({status})"
        )),
    };
    (plain, verdict)
}

/// The pass whose count must match across stores.
const PLAIN: &str = "plain";

/// One libtest result line of the conformance target.
#[derive(Debug, PartialEq)]
struct Outcome<'a> {
    /// `plain`, `through_faults`, `admin`, `server_time` or `model_based`.
    pass: &'a str,
    check: &'a str,
    passed: bool,
}

/// Parses `test <pass>::<check> ... ok` (or `FAILED`); other lines, and
/// tests outside a pass module, are not check results.
fn parse_outcome(line: &str) -> Option<Outcome<'_>> {
    let (name, result) = line.strip_prefix("test ")?.split_once(" ... ")?;
    let (pass, check) = name.split_once("::")?;
    let passed = match result.trim() {
        "ok" => true,
        "FAILED" => false,
        _ => return None,
    };
    Some(Outcome {
        pass,
        check,
        passed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_lines_are_read_from_libtest_output() {
        assert_eq!(
            parse_outcome("test plain::acking_twice_pushes_exactly_one_record ... ok"),
            Some(Outcome {
                pass: "plain",
                check: "acking_twice_pushes_exactly_one_record",
                passed: true
            })
        );
        let failed = parse_outcome("test through_faults::peek_honours_offset_and_limit ... FAILED");
        assert_eq!(
            failed.map(|o| (o.pass, o.passed)),
            Some(("through_faults", false))
        );
        assert_eq!(parse_outcome("test result: ok. 106 passed; 0 failed"), None);
        assert_eq!(parse_outcome("running 106 tests"), None);
        assert_eq!(parse_outcome("test plain::x ... ignored"), None);
    }

    #[test]
    fn store_selection() {
        assert!(matches!(select("sqlite"), Err(Error::Usage(_))));
        assert!(matches!(select("--all"), Err(Error::Usage(_))));
    }
}
