//! `cargo xtask chaos [--workers N] [--requests M] [--seed S] [--short] [--topology standalone|cluster|sentinel] [--kill queue|list|both]`:
//! the chaos run on real processes and a real redis-server (or a real
//! Redis Cluster, or a Sentinel group).
//!
//! Builds the `async-worker` binary in release mode, then runs the harness's
//! `chaos` binary (`xtask/harness/src/bin/chaos/`, which does the work and
//! the verdict: nothing lost, exactly one record per accepted generation)
//! in release mode too; it finds the worker beside it in the target
//! directory. The two are built in separate cargo calls so the worker under
//! test is the production build, without the harness's `test-support`
//! features. `cargo xtask ci` runs `--short` (2 workers, 1,500 requests,
//! one kill, the Redis restart and the proxy cut) on the debug builds.
//!
//! On one server the full run does it twice, on `appendfsync always` and
//! on `everysec` (the Redis SIGKILL may then undo the last second: lost
//! must stay 0, extra records are counted); `--appendfsync POLICY` runs one.
//! `--topology cluster` (three primaries with a replica each; the queue and
//! the result list on different primaries) and `--topology sentinel` kill a
//! primary mid-run instead (`--kill list|both`, cluster only: the result
//! list's primary, or the queue's then the list's), with the workers'
//! `--replica-acks` 0 then 1 (the short run: 0). `--payload-ref` and
//! `--missing-payloads` set the share of submissions by reference and of
//! those with no payload stored (defaults 0.5 and 0.02).

use crate::{Error, cargo, run_inherit, shown};

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

/// The runs to make, each as the flags it adds: on one server the fsync
/// policy, on a cluster or Sentinel group (no AOF there) the workers'
/// `replica_acks`; the one asked for, else the first choice (`always`, 0)
/// for `--short` and both for the full run.
fn variants(flags: &[String]) -> Vec<Vec<String>> {
    let has = |flag: &str| flags.iter().any(|f| f == flag);
    let replicated = value(flags, "--topology").is_some_and(|t| t != "standalone");
    let (flag, choices) = match replicated {
        true => ("--replica-acks", ["0", "1"]),
        false => ("--appendfsync", ["always", "everysec"]),
    };
    if has(flag) {
        return vec![Vec::new()];
    }
    let runs = if has("--short") { 1 } else { 2 };
    let run = |choice: &&str| vec![flag.to_owned(), choice.to_string()];
    choices[..runs].iter().map(run).collect()
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
        let Some(value) = inline.or_else(|| args.next()) else {
            return Err(Error::Usage(format!("`{name}` needs {expected}")));
        };
        let number = value.parse::<u64>().ok();
        let one_of = |choices: &str| choices.split(' ').any(|c| c == value);
        let valid = match name.as_str() {
            "--workers" => number >= Some(2),
            "--requests" => number >= Some(100),
            "--seed" => number.is_some(),
            "--appendfsync" => one_of("always everysec"),
            "--topology" => one_of("standalone cluster sentinel"),
            "--replica-acks" => one_of("0 1"),
            "--kill" => one_of("queue list both"),
            _ => value.parse::<f64>().is_ok_and(|f| (0.0..=1.0).contains(&f)),
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
    let release = (profile == Profile::Release).then_some("--release");
    let mut build = cargo("build -p async-worker --bin async-worker");
    build.args(release).args(extra);
    println!("== chaos: {}", shown(&build));
    run_inherit(&mut build)?;
    let mut chaos = cargo("run --quiet -p harness --bin chaos");
    chaos.args(release).args(extra).arg("--").args(flags);
    println!("== chaos: {}", shown(&chaos));
    run_inherit(&mut chaos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owned_args;

    fn refused(args: &str) -> bool {
        matches!(parse(owned_args(args)), Err(Error::Usage(_)))
    }

    #[test]
    fn flags_are_checked_and_normalised() {
        let parsed = parse(owned_args("--workers=4 --seed 7 --short")).ok();
        let expected = owned_args("--workers 4 --seed 7 --short");
        assert_eq!(parsed, Some(expected));
        let fractions = parse(owned_args("--payload-ref=1 --missing-payloads 0.1"));
        let expected = owned_args("--payload-ref 1 --missing-payloads 0.1");
        assert_eq!(fractions.ok(), Some(expected));
        for bad in [
            "--workers 1",
            "--requests ten",
            "--seed",
            "--fast",
            "--appendfsync no",
            "--payload-ref 1.5",
            "--payload-ref -0.2",
            "--payload-ref half",
        ] {
            assert!(refused(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_topology_is_checked_before_the_build_and_rules_out_what_it_has_no_use_for() {
        let cluster = parse(owned_args("--topology=cluster --short")).ok();
        assert_eq!(cluster, Some(owned_args("--topology cluster --short")));
        let list = parse(owned_args("--topology cluster --kill=list")).ok();
        let expected = owned_args("--topology cluster --kill list");
        assert_eq!(list, Some(expected));
        for bad in [
            "--topology mesh",
            "--topology cluster --appendfsync everysec",
            "--replica-acks 1",
            "--topology sentinel --replica-acks 2",
            "--topology cluster --kill replica",
            "--topology sentinel --kill list",
            "--kill both",
        ] {
            assert!(refused(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_replicated_topology_runs_with_replica_acks_0_then_1_and_short_with_0() {
        let variants = |args: &str| variants(&owned_args(args));
        let (acks_0, acks_1) = (
            owned_args("--replica-acks 0"),
            owned_args("--replica-acks 1"),
        );
        assert_eq!(
            variants("--topology sentinel"),
            vec![acks_0.clone(), acks_1]
        );
        assert_eq!(variants("--topology cluster --short"), vec![acks_0]);
        let asked = variants("--topology cluster --replica-acks 1");
        assert_eq!(asked, vec![Vec::<String>::new()]);
        let standalone = variants("--short");
        assert_eq!(standalone, vec![owned_args("--appendfsync always")]);
    }

    #[test]
    fn the_full_run_covers_both_fsync_policies_and_the_short_run_only_always() {
        let both = vec![
            owned_args("--appendfsync always"),
            owned_args("--appendfsync everysec"),
        ];
        assert_eq!(variants(&[]), both);
        assert_eq!(variants(&owned_args("--short")), both[..1]);
        let asked = variants(&owned_args("--appendfsync everysec"));
        assert_eq!(asked, vec![Vec::<String>::new()]);
    }
}
