//! `cargo xtask deny`: cargo-deny's licence, ban and source checks against `deny.toml`, advisories on request; cargo-deny is found on `PATH` or given by path.
//!
//! Not part of `cargo xtask ci`: cargo-deny is not installed with the
//! toolchain (`cargo install --locked cargo-deny` took 5 min 25 s on the
//! 2-core VM), and its advisory check fetches the RustSec database from
//! GitHub, which a build without network cannot reach.

use crate::{Error, project_root, run_inherit};
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The checks that need nothing beyond the lock file and the registry index.
const CHECKS: [&str; 3] = ["licenses", "bans", "sources"];

/// What to run, from the command line.
#[derive(Debug, PartialEq)]
struct Options {
    /// `--cargo-deny PATH`: the binary, instead of the one on `PATH`.
    program: Option<PathBuf>,
    /// `--advisories`: the RustSec check too (fetches its database).
    advisories: bool,
}

pub(crate) fn run(args: Vec<String>) -> Result<(), Error> {
    let options = parse(args)?;
    let program = match options.program {
        Some(path) if path.is_file() => path,
        Some(path) => {
            return Err(Error::Invalid(format!(
                "--cargo-deny {}: no such file; give the path of a cargo-deny binary",
                path.display()
            )));
        }
        None => on_path("cargo-deny").ok_or_else(|| {
            Error::Failed(
                "cargo-deny is not on PATH: install it with `cargo install --locked cargo-deny` \
                 (a few minutes) or pass --cargo-deny /path/to/cargo-deny"
                    .to_owned(),
            )
        })?,
    };
    let mut cmd = Command::new(program);
    cmd.arg("check").args(CHECKS).current_dir(project_root());
    if options.advisories {
        cmd.arg("advisories");
    }
    run_inherit(&mut cmd)
}

fn parse(args: Vec<String>) -> Result<Options, Error> {
    let mut options = Options {
        program: None,
        advisories: false,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--advisories" => options.advisories = true,
            "--cargo-deny" => match args.next() {
                Some(path) => options.program = Some(PathBuf::from(path)),
                None => return Err(Error::Usage("--cargo-deny needs a path".to_owned())),
            },
            other => return Err(Error::Usage(format!("deny: unknown option `{other}`"))),
        }
    }
    Ok(options)
}

/// The first `name` among the directories of `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| Path::is_file(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owned_args;

    #[test]
    fn deny_reads_a_cargo_deny_path_and_the_advisories_switch_and_refuses_anything_else() {
        let options = parse(owned_args(&[
            "--cargo-deny",
            "/x/cargo-deny",
            "--advisories",
        ]));
        assert!(matches!(
            options,
            Ok(Options { program: Some(ref p), advisories: true }) if p == Path::new("/x/cargo-deny")
        ));
        assert!(matches!(
            parse(vec![]),
            Ok(Options {
                program: None,
                advisories: false
            })
        ));
        for bad in [&["--cargo-deny"][..], &["--fast"]] {
            let refused = parse(owned_args(bad));
            assert!(matches!(refused, Err(Error::Usage(_))), "{bad:?}");
        }
    }

    #[test]
    fn a_cargo_deny_path_that_is_no_file_is_refused_naming_it() {
        let result = run(owned_args(&["--cargo-deny", "/no/such/cargo-deny"]));
        let Err(Error::Invalid(message)) = result else {
            panic!("refused");
        };
        assert!(message.contains("/no/such/cargo-deny"), "{message}");
    }
}
