//! `cargo xtask deny` and the `deny` step of `cargo xtask ci`: cargo-deny's licence, ban and source checks against `deny.toml`.
//!
//! cargo-deny is a maintained tool, so this only finds and runs it:
//! `--cargo-deny PATH`, else the one on `PATH` (`.ci/run` installs the
//! pinned release, [`PINNED`], when there is none). The checks run at
//! `--log-level error`: the duplicate versions `deny.toml` allows (over a
//! thousand lines of warnings) are not printed, a failure's diagnostics
//! are. Advisories (`--advisories`) fetch the RustSec database from
//! GitHub, which a build without network beyond the registries cannot reach.

use crate::{Error, on_path, project_root, run_inherit, shown};
use std::path::PathBuf;
use std::process::Command;

/// The cargo-deny release `.ci/run` installs; the message for a missing one names it.
const PINNED: &str = "0.20.2";

pub(crate) fn run(args: Vec<String>) -> Result<(), Error> {
    let (program, advisories) = parse(args)?;
    let program = match program {
        Some(path) if path.is_file() => path,
        Some(path) => {
            return Err(Error::Invalid(format!(
                "--cargo-deny {}: no such file; give the path of a cargo-deny binary",
                path.display()
            )));
        }
        None => found()?,
    };
    run_checks(program, advisories)
}

/// The `deny` step of `cargo xtask ci`.
pub(crate) fn check() -> Result<(), Error> {
    run_checks(found()?, false)
}

fn run_checks(program: PathBuf, advisories: bool) -> Result<(), Error> {
    let mut cmd = Command::new(program);
    cmd.args("--log-level error check licenses bans sources".split(' '));
    cmd.args(advisories.then_some("advisories"))
        .current_dir(project_root());
    println!("--> {}", shown(&cmd));
    run_inherit(&mut cmd)?;
    println!("deny: ok (`cargo deny check bans` lists the duplicate versions it allows)");
    Ok(())
}

fn found() -> Result<PathBuf, Error> {
    on_path("cargo-deny").ok_or_else(|| {
        Error::Failed(format!(
            "cargo-deny is not on PATH: install it with \
             `cargo install --locked cargo-deny --version {PINNED}` (as .ci/run does) \
             or pass --cargo-deny PATH"
        ))
    })
}

/// `--cargo-deny PATH` and `--advisories`.
fn parse(args: Vec<String>) -> Result<(Option<PathBuf>, bool), Error> {
    let (mut program, mut advisories) = (None, false);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--advisories" => advisories = true,
            "--cargo-deny" => match args.next() {
                Some(path) => program = Some(PathBuf::from(path)),
                None => return Err(Error::Usage("--cargo-deny needs a path".to_owned())),
            },
            other => return Err(Error::Usage(format!("deny: unknown option `{other}`"))),
        }
    }
    Ok((program, advisories))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owned_args;

    #[test]
    fn deny_reads_a_cargo_deny_path_and_the_advisories_switch_and_refuses_anything_else() {
        let options = parse(owned_args("--cargo-deny /x/cargo-deny --advisories"));
        assert!(matches!(options, Ok((Some(p), true)) if p.as_os_str() == "/x/cargo-deny"));
        assert!(matches!(parse(vec![]), Ok((None, false))));
        for bad in ["--cargo-deny", "--fast"] {
            let refused = parse(owned_args(bad));
            assert!(matches!(refused, Err(Error::Usage(_))), "{bad:?}");
        }
    }

    #[test]
    fn a_cargo_deny_path_that_is_no_file_is_refused_naming_it() {
        let result = run(owned_args("--cargo-deny /no/such/cargo-deny"));
        assert!(matches!(result, Err(Error::Invalid(m)) if m.contains("/no/such/cargo-deny")));
    }

    #[test]
    fn ci_run_installs_the_pinned_cargo_deny_the_missing_tool_message_names() {
        let ci_run = std::fs::read_to_string(project_root().join(".ci/run")).expect(".ci/run");
        assert!(
            ci_run.contains(&format!("cargo-deny --version {PINNED}")),
            "{ci_run}"
        );
    }
}
