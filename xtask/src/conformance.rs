//! `cargo xtask conformance [--store memory|redis|all]`: runs the ClaimStore
//! conformance suite against each chosen store.
//!
//! Each store crate runs the suite as the `harness = false` test target
//! `conformance` (`tests/conformance.rs`), which prints `ok   <check>` or
//! `FAIL <check>: <reason>` per check and ends with `N passed, N failed`. A
//! store exists once its crate has that file. Output is streamed as it comes.
//! Arguments after `--` go to the suite binaries (a name filter, say); a run
//! in which no check executed fails.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
};

use crate::{Error, Shown, cargo, project_root};

/// A backend with a conformance test target.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) name: &'static str,
    krate: &'static str,
}

const STORES: [Store; 2] = [
    Store {
        name: "memory",
        krate: "claim-memory",
    },
    Store {
        name: "redis",
        krate: "claim-redis",
    },
];

impl Store {
    fn exists(&self) -> bool {
        project_root()
            .join(self.krate)
            .join("tests/conformance.rs")
            .is_file()
    }
}

/// Stores whose crate has `tests/conformance.rs`, in a fixed order.
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
                Error::Usage("`--store` needs a value: memory, redis or all".into())
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
                "no store has a conformance suite yet (no claim-*/tests/conformance.rs)".into(),
            ));
        }
        return Ok(stores);
    }
    let store = STORES.iter().find(|s| s.name == which).ok_or_else(|| {
        Error::Usage(format!(
            "unknown store `{which}`: expected memory, redis or all"
        ))
    })?;
    if !store.exists() {
        return Err(Error::Invalid(format!(
            "store `{which}` has no conformance suite yet: {}/tests/conformance.rs does not exist",
            store.krate
        )));
    }
    Ok(vec![store])
}

/// Runs the suite for every store (all of them, even after a failure), with
/// `extra` cargo arguments such as `--locked`; fails if any store failed.
pub(crate) fn run(stores: &[&Store], extra: &[&str]) -> Result<(), Error> {
    let mut failures = Vec::new();
    let (mut passed, mut failed) = (0, 0);
    for store in stores {
        let mut cmd = cargo(&["test", "-p", store.krate, "--test", "conformance"]);
        cmd.args(extra).env_remove("PROPTEST_CASES");
        println!("== conformance: {} ({})", store.name, Shown(&cmd));
        let (summary, verdict) = run_store(&mut cmd);
        if let Some((p, f)) = summary {
            passed += p;
            failed += f;
        }
        if let Err(reason) = verdict {
            failures.push(format!("{}: {reason}", store.name));
        }
    }
    if stores.len() > 1 {
        let names: Vec<_> = stores.iter().map(|s| s.name).collect();
        println!("== conformance total over {}", names.join(", "));
        println!("{passed} passed, {failed} failed");
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

/// Streams one store's output; returns its `(passed, failed)` counts, if it
/// printed them, and whether the store passed.
fn run_store(cmd: &mut Command) -> (Option<(u64, u64)>, Result<(), String>) {
    let mut child = match cmd.stdout(Stdio::piped()).spawn() {
        Ok(child) => child,
        Err(e) => return (None, Err(format!("could not start `{}`: {e}", Shown(cmd)))),
    };
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut summary = None;
    let mut skipped = false;
    let mut line = Vec::new();
    loop {
        line.clear();
        match stdout.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return (summary, Err(format!("reading test output: {e}")));
            }
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        println!("{text}");
        if let Some(counts) = parse_summary(text) {
            summary = Some(counts);
        }
        // A store whose server is not installed skips (outside CI only: with
        // `CI` set the suite fails instead of printing this).
        skipped |= text.starts_with("skipped:");
    }
    let verdict = match (child.wait(), summary) {
        (Err(e), _) => Err(format!("waiting for the test: {e}")),
        (Ok(_), Some((0, 0))) => Err("no check ran (a filter that matches nothing?)".into()),
        (Ok(status), Some((_, 0))) if status.success() => Ok(()),
        (Ok(status), Some((_, 0))) => Err(format!("checks passed but the test failed ({status})")),
        (Ok(status), Some((_, f))) => Err(format!("{f} check(s) failed ({status})")),
        (Ok(status), None) if status.success() && skipped => Ok(()),
        (Ok(status), None) if status.success() => {
            Err("no `N passed, N failed` line in the output".into())
        }
        (Ok(status), None) => Err(format!(
            "the test did not build or did not run to the end ({status})"
        )),
    };
    (summary, verdict)
}

/// Parses the suite's closing line `N passed, N failed`.
fn parse_summary(line: &str) -> Option<(u64, u64)> {
    let (passed, failed) = line
        .trim()
        .strip_suffix(" failed")?
        .split_once(" passed, ")?;
    Some((passed.parse().ok()?, failed.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_line() {
        assert_eq!(parse_summary("34 passed, 0 failed"), Some((34, 0)));
        assert_eq!(parse_summary("31 passed, 3 failed\n"), Some((31, 3)));
        assert_eq!(parse_summary("ok   claim_takes_head"), None);
        assert_eq!(parse_summary("x passed, 0 failed"), None);
    }

    #[test]
    fn store_selection() {
        assert!(matches!(select("sqlite"), Err(Error::Usage(_))));
        assert!(matches!(select("--all"), Err(Error::Usage(_))));
    }
}
