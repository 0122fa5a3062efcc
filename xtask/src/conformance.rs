//! `cargo xtask conformance [--store memory|redis|redis-tagged|redis-cluster|all] [-- <test args>]`:
//! the ClaimStore conformance suite on each chosen store, as `cargo test`
//! runs it, with a summary line per store.
//!
//! Each store runs the suite as a `harness = false` test target of its
//! crate (`claim_conformance::run` is its main): `conformance`; the Redis
//! store also `conformance_tagged` (the cluster key layout on one server)
//! and `conformance_cluster` (a real local Redis Cluster). The targets are
//! `test = false`, so `cargo test --workspace` leaves them to this command
//! and `cargo test -p <crate> --test <target>` runs one by hand.
//!
//! A thin wrapper: one `cargo test --workspace --no-run --test <target>…`
//! builds every chosen target at once with the workspace's features (the
//! artifacts `cargo test --workspace` already built, so nothing rebuilds),
//! then each store's test binary runs as `cargo test -p <crate> --test
//! <target>` would run it (from its crate's directory), its output passed
//! through. Its `test <pass>::<file>::<check> ... ok` lines are counted per
//! pass (`plain`, `through_faults`, `server_time`, `admin`,
//! `model_based`), and each store closes with `<store>: N passed, N failed`
//! (all its trials) after one line per pass; the plain pass's count must
//! be equal across stores. Arguments after `--` go to the test binaries (a
//! name filter, say); a store on which no plain check ran fails.

use std::{
    collections::BTreeMap,
    io::{BufRead, BufReader},
    path::PathBuf,
    process::{Command, Stdio},
};

use crate::{Error, Shown, cargo, project_root};

mod output;

use output::{parse_artifact, parse_outcome};

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
    let mut test_args = Vec::new();
    while let Some(arg) = args.next() {
        if arg == "--" {
            test_args.extend(args.by_ref());
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
    run(&stores, &[], &test_args)
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
/// `cargo_args` for the build (such as `--locked`) and `test_args` for the
/// test binaries; fails if any store failed.
pub(crate) fn run(
    stores: &[&Store],
    cargo_args: &[&str],
    test_args: &[String],
) -> Result<(), Error> {
    let to_run: Vec<&Store> = stores.iter().copied().filter(|s| !s.skips()).collect();
    let binaries = build(&to_run, cargo_args)?;
    let mut failures = Vec::new();
    let mut total = Tally::default();
    for store in stores {
        println!(
            "== conformance: {} (as `cargo test -p {} --test {}`)",
            store.name, store.krate, store.target
        );
        if store.skips() {
            println!(
                "skipped: {} not on PATH",
                store.needs.unwrap_or("its server")
            );
            continue;
        }
        let Some(binary) = binaries.get(&(store.krate, store.target)) else {
            failures.push(format!("{}: cargo built no test binary", store.name));
            continue;
        };
        let mut cmd = Command::new(binary);
        let dir = project_root().join(store.krate);
        cmd.args(test_args)
            .current_dir(&dir)
            .env("CARGO_MANIFEST_DIR", &dir)
            .env_remove("PROPTEST_CASES");
        let (all, verdict) = run_store(store.name, &mut cmd);
        total.passed += all.passed;
        total.failed += all.failed;
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

/// Builds the stores' test targets in one `cargo test --workspace --no-run`
/// (the workspace's features, as the test step builds them) and reads
/// where cargo put each binary from its JSON messages.
fn build(
    stores: &[&Store],
    cargo_args: &[&str],
) -> Result<BTreeMap<(&'static str, &'static str), PathBuf>, Error> {
    let mut binaries = BTreeMap::new();
    if stores.is_empty() {
        return Ok(binaries);
    }
    let mut cmd = cargo(&["test", "--workspace", "--no-run"]);
    let mut targets: Vec<&str> = stores.iter().map(|s| s.target).collect();
    targets.dedup();
    for target in targets {
        cmd.args(["--test", target]);
    }
    cmd.args(cargo_args)
        .arg("--message-format=json-render-diagnostics")
        .stdout(Stdio::piped());
    println!("== conformance: building ({})", Shown(&cmd));
    let output = cmd
        .spawn()
        .and_then(|child| child.wait_with_output())
        .map_err(|e| Error::Failed(format!("could not run `{}`: {e}", Shown(&cmd))))?;
    if !output.status.success() {
        return Err(Error::Failed(format!(
            "`{}` failed ({})",
            Shown(&cmd),
            output.status
        )));
    }
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Some(built) = parse_artifact(line) else {
            continue;
        };
        let store = stores.iter().find(|s| {
            s.target == built.target
                && built
                    .manifest
                    .ends_with(&format!("/{}/Cargo.toml", s.krate))
        });
        if let Some(store) = store {
            binaries.insert((store.krate, store.target), PathBuf::from(built.executable));
        }
    }
    Ok(binaries)
}

/// Checks passed and failed in one pass.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    passed: u64,
    failed: u64,
}

/// Passes one store's test output through, counting its results per pass;
/// returns the counts over all passes and whether the store passed.
fn run_store(store: &str, cmd: &mut Command) -> (Tally, Result<(), String>) {
    let mut passes: BTreeMap<String, Tally> = BTreeMap::new();
    let mut child = match cmd.stdout(Stdio::piped()).spawn() {
        Ok(child) => child,
        Err(e) => {
            return (
                Tally::default(),
                Err(format!("could not start the test: {e}")),
            );
        }
    };
    let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut read_error = None;
    for line in stdout.split(b'\n') {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                read_error = Some(format!("reading test output: {e}"));
                let _ = child.kill();
                break;
            }
        };
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches('\r');
        println!("{text}");
        if let Some(outcome) = parse_outcome(text) {
            let tally = passes.entry(outcome.pass.to_owned()).or_default();
            match outcome.passed {
                true => tally.passed += 1,
                false => tally.failed += 1,
            }
        }
    }
    let mut all = Tally::default();
    for (pass, tally) in &passes {
        let name = pass.replace('_', " ");
        println!(
            "{store} {name}: {} passed, {} failed",
            tally.passed, tally.failed
        );
        all.passed += tally.passed;
        all.failed += tally.failed;
    }
    println!("{store}: {} passed, {} failed", all.passed, all.failed);
    let plain = passes.get(PLAIN).copied().unwrap_or_default();
    let status = child.wait();
    let verdict = match (read_error, status) {
        (Some(why), _) => Err(why),
        (None, Err(e)) => Err(format!("waiting for the test: {e}")),
        (None, Ok(_)) if plain.passed + plain.failed == 0 => {
            Err("no plain check ran (a filter that matches nothing?)".into())
        }
        (None, Ok(status)) if all.failed > 0 => {
            Err(format!("{} trial(s) failed ({status})", all.failed))
        }
        (None, Ok(status)) if status.success() => Ok(()),
        (None, Ok(status)) => Err(format!("the test did not run to the end ({status})")),
    };
    (all, verdict)
}

/// The pass whose count must match across stores.
const PLAIN: &str = "plain";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_selection() {
        assert!(matches!(select("sqlite"), Err(Error::Usage(_))));
        assert!(matches!(select("--all"), Err(Error::Usage(_))));
    }
}
