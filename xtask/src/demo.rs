//! `cargo xtask demo [demo flags]`: the README's run command, `async-worker demo`, in release mode.
//!
//! The demo lives in the async-worker binary (operators can run it where the
//! binary is installed); this subcommand only builds and starts it, passing
//! every flag through (`--redis URL`, `--requests N`, `--replicas N`, …).

use crate::{Error, cargo, run_inherit, shown};

pub(crate) fn run(args: Vec<String>) -> Result<(), Error> {
    let mut demo = cargo("run --release --quiet -p async-worker -- demo");
    demo.args(&args);
    println!("== demo: {}", shown(&demo));
    run_inherit(&mut demo)
}
