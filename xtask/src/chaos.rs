//! `cargo xtask chaos [--workers N] [--requests M] [--seed S] [--short] [--topology standalone|cluster|sentinel] [--kill queue|list|both]`:
//! the chaos run on real processes and a real redis-server (or a real
//! Redis Cluster, or a Sentinel group).
//!
//! Builds the `async-worker` binary in release mode, then runs the `chaos`
//! binary of the harness crate (`xtask/harness/src/bin/chaos/`), also in
//! release mode, which finds the worker beside it in the target directory
//! (`ci`'s short run uses the debug builds instead). The chaos binary does
//! the work and the verdict: it prints the figures and exits non-zero
//! unless nothing was lost and every accepted generation has exactly one
//! record. It lives in the harness crate because it needs the
//! `test-support` features of claim-redis (the private redis-server) and
//! async-worker (the stand-in gateway); the two are built in separate cargo
//! calls so the worker under test is the production build, without
//! test-support. `--short` is the size
//! `cargo xtask ci` runs: 2 workers, 1,500 requests, one kill, the Redis
//! restart and the proxy cut, on `appendfsync always`. The full run does the
//! same twice: on `appendfsync always`, then on `appendfsync everysec` (the
//! Redis SIGKILL may then undo the last second; lost must stay 0, extra
//! records are counted). `--appendfsync POLICY` runs only that one.
//! `--payload-ref FRACTION` (default 0.5) is the share of submissions made
//! by reference and `--missing-payloads FRACTION` (default 0.02) the share
//! of those with no payload stored; the short run covers both.
//!
//! `--topology cluster` runs it on a private Redis Cluster (three primaries
//! with a replica each; the queue and the result list on two different
//! primaries, so every ack is the split push-once-then-drop) and
//! `--topology sentinel` on a primary and replica behind three sentinels.
//! There the Redis fault is a SIGKILL of a primary mid-run (cluster: the
//! queue's; its replica is promoted, the killed node comes back as a
//! replica), there is no proxy cut, and the producer counts a submit as
//! accepted only once a replica holds it. `--replica-acks N` (0 or 1) is
//! the workers' `replica_acks`; the full run does 0, then 1, the short run
//! 0. `cargo xtask ci` runs the short cluster run after the standalone one.
//! `--kill list` (cluster only) SIGKILLs the result list's primary instead
//! of the queue's, `--kill both` the queue's and then the list's: the split
//! ack's push and its marker are then what the failover can undo (default
//! `queue`; not part of `ci`).

use crate::{Error, Shown, cargo, run_inherit};

/// Flags that take a value, and what the value must be.
const VALUED: [(&str, &str); 9] = [
    ("--workers", "a number of worker processes, at least 2"),
    ("--requests", "a number of requests, at least 100"),
    ("--seed", "an unsigned 64-bit integer"),
    ("--appendfsync", "always or everysec"),
    ("--payload-ref", "a fraction from 0 to 1"),
    ("--missing-payloads", "a fraction from 0 to 1"),
    ("--topology", "standalone, cluster or sentinel"),
    ("--replica-acks", "0 or 1 (cluster and sentinel only)"),
    ("--kill", "queue, list or both (cluster only)"),
];

pub(crate) fn run_cli(args: Vec<String>) -> Result<(), Error> {
    let flags = parse(args)?;
    for variant in variants(&flags) {
        let mut with_variant = flags.clone();
        with_variant.extend(variant);
        run(&with_variant, &[], Profile::Release)?;
    }
    Ok(())
}

/// The value of `--flag` in normalised flags.
fn value<'a>(flags: &'a [String], flag: &str) -> Option<&'a str> {
    let at = flags.iter().position(|f| f == flag)?;
    flags.get(at + 1).map(String::as_str)
}

/// The runs to make, each as the flags it adds: on one server, the fsync
/// policies ([`policies`]); on a cluster or Sentinel group (no AOF there),
/// the workers' `replica_acks` asked for, else 0 for `--short` and 0 then 1
/// for the full run.
fn variants(flags: &[String]) -> Vec<Vec<String>> {
    let replicated = value(flags, "--topology").is_some_and(|t| t != "standalone");
    let flag = |name: &str, value: &str| vec![name.to_owned(), value.to_owned()];
    if !replicated {
        return policies(flags)
            .into_iter()
            .map(|p| p.map_or_else(Vec::new, |p| flag("--appendfsync", p)))
            .collect();
    }
    if flags.iter().any(|f| f == "--replica-acks") {
        vec![Vec::new()]
    } else if flags.iter().any(|f| f == "--short") {
        vec![flag("--replica-acks", "0")]
    } else {
        vec![flag("--replica-acks", "0"), flag("--replica-acks", "1")]
    }
}

/// The fsync policies to run: the one asked for; else `always` alone for
/// `--short`, both for the full run.
fn policies(flags: &[String]) -> Vec<Option<&'static str>> {
    if flags.iter().any(|f| f == "--appendfsync") {
        vec![None]
    } else if flags.iter().any(|f| f == "--short") {
        vec![Some("always")]
    } else {
        vec![Some("always"), Some("everysec")]
    }
}

/// Which build the chaos run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Profile {
    /// Full-size runs: the worker as operators run it.
    Release,
    /// `cargo xtask ci`'s short run: the debug builds the test step already
    /// made, so CI does not compile the workspace a second time.
    Dev,
}

/// Checks the flags before the (long) release build, in `--flag value` form.
fn parse(args: Vec<String>) -> Result<Vec<String>, Error> {
    let mut flags = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--short" {
            flags.push(arg);
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
            None => (arg.clone(), None),
        };
        let Some((_, expected)) = VALUED.iter().find(|(flag, _)| *flag == name) else {
            return Err(Error::Usage(format!("chaos: unexpected argument `{arg}`")));
        };
        let value = match inline.or_else(|| args.next()) {
            Some(value) => value,
            None => return Err(Error::Usage(format!("`{name}` needs {expected}"))),
        };
        let minimum = match name.as_str() {
            "--workers" => 2,
            "--requests" => 100,
            _ => 0,
        };
        let valid = match name.as_str() {
            "--appendfsync" => value == "always" || value == "everysec",
            "--topology" => matches!(value.as_str(), "standalone" | "cluster" | "sentinel"),
            "--replica-acks" => value == "0" || value == "1",
            "--kill" => matches!(value.as_str(), "queue" | "list" | "both"),
            "--payload-ref" | "--missing-payloads" => {
                value.parse::<f64>().is_ok_and(|f| (0.0..=1.0).contains(&f))
            }
            _ => value.parse::<u64>().is_ok_and(|n| n >= minimum),
        };
        if !valid {
            return Err(Error::Usage(format!(
                "`{name} {value}`: expected {expected}"
            )));
        }
        flags.push(name);
        flags.push(value);
    }
    let replicated = value(&flags, "--topology").is_some_and(|t| t != "standalone");
    if replicated && flags.iter().any(|f| f == "--appendfsync") {
        return Err(Error::Usage(
            "`--appendfsync` applies to the standalone server only: cluster and sentinel nodes keep their data on replicas, without AOF; drop it or use --topology standalone".into(),
        ));
    }
    let cluster = value(&flags, "--topology") == Some("cluster");
    if !cluster && value(&flags, "--kill").is_some_and(|k| k != "queue") {
        return Err(Error::Usage(
            "`--kill list` and `--kill both` strike the result list's own primary: use them with --topology cluster".into(),
        ));
    }
    if !replicated && value(&flags, "--replica-acks").is_some_and(|n| n != "0") {
        return Err(Error::Usage(
            "`--replica-acks 1` needs a replica: use it with --topology cluster or sentinel".into(),
        ));
    }
    Ok(flags)
}

/// Builds the worker, then runs the chaos binary with `flags`; `extra` cargo
/// arguments (such as `--locked`) go to both cargo calls.
pub(crate) fn run(flags: &[String], extra: &[&str], profile: Profile) -> Result<(), Error> {
    let release: &[&str] = match profile {
        Profile::Release => &["--release"],
        Profile::Dev => &[],
    };
    let mut build = cargo(&["build", "-p", "async-worker", "--bin", "async-worker"]);
    build.args(release).args(extra);
    println!("== chaos: {}", Shown(&build));
    run_inherit(&mut build)?;
    let mut chaos = cargo(&["run", "--quiet", "-p", "harness", "--bin", "chaos"]);
    chaos.args(release).args(extra).arg("--").args(flags);
    println!("== chaos: {}", Shown(&chaos));
    run_inherit(&mut chaos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owned_args;

    #[test]
    fn flags_are_checked_and_normalised() {
        let parsed = parse(owned_args(&["--workers=4", "--seed", "7", "--short"])).ok();
        assert_eq!(
            parsed,
            Some(owned_args(&["--workers", "4", "--seed", "7", "--short"]))
        );
        assert!(matches!(
            parse(owned_args(&["--workers", "1"])),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse(owned_args(&["--requests", "ten"])),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse(owned_args(&["--seed"])),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse(owned_args(&["--fast"])),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            parse(owned_args(&["--appendfsync", "no"])),
            Err(Error::Usage(_))
        ));
        assert_eq!(
            parse(owned_args(&[
                "--payload-ref=1",
                "--missing-payloads",
                "0.1"
            ]))
            .ok(),
            Some(owned_args(&[
                "--payload-ref",
                "1",
                "--missing-payloads",
                "0.1"
            ]))
        );
        for bad in ["1.5", "-0.2", "half"] {
            assert!(matches!(
                parse(owned_args(&["--payload-ref", bad])),
                Err(Error::Usage(_))
            ));
        }
    }

    #[test]
    fn a_topology_is_checked_before_the_build_and_rules_out_what_it_has_no_use_for() {
        assert_eq!(
            parse(owned_args(&["--topology=cluster", "--short"])).ok(),
            Some(owned_args(&["--topology", "cluster", "--short"]))
        );
        assert_eq!(
            parse(owned_args(&["--topology", "cluster", "--kill=list"])).ok(),
            Some(owned_args(&["--topology", "cluster", "--kill", "list"]))
        );
        for bad in [
            &["--topology", "mesh"][..],
            &["--topology", "cluster", "--appendfsync", "everysec"],
            &["--replica-acks", "1"],
            &["--topology", "sentinel", "--replica-acks", "2"],
            &["--topology", "cluster", "--kill", "replica"],
            &["--topology", "sentinel", "--kill", "list"],
            &["--kill", "both"],
        ] {
            assert!(
                matches!(parse(owned_args(bad)), Err(Error::Usage(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_replicated_topology_runs_with_replica_acks_0_then_1_and_short_with_0() {
        let full = variants(&owned_args(&["--topology", "sentinel"]));
        assert_eq!(
            full,
            vec![
                owned_args(&["--replica-acks", "0"]),
                owned_args(&["--replica-acks", "1"])
            ]
        );
        let short = variants(&owned_args(&["--topology", "cluster", "--short"]));
        assert_eq!(short, vec![owned_args(&["--replica-acks", "0"])]);
        let asked = variants(&owned_args(&[
            "--topology",
            "cluster",
            "--replica-acks",
            "1",
        ]));
        assert_eq!(asked, vec![Vec::<String>::new()]);
        let standalone = variants(&owned_args(&["--short"]));
        assert_eq!(standalone, vec![owned_args(&["--appendfsync", "always"])]);
    }

    #[test]
    fn the_full_run_covers_both_fsync_policies_and_the_short_run_only_always() {
        assert_eq!(policies(&[]), vec![Some("always"), Some("everysec")]);
        assert_eq!(policies(&owned_args(&["--short"])), vec![Some("always")]);
        assert_eq!(
            policies(&owned_args(&["--appendfsync", "everysec"])),
            vec![None]
        );
    }
}
