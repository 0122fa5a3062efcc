//! The `async-worker` command line: `run` (the default, also what runs without a subcommand), `demo` and `admin`.

use clap::{Parser, Subcommand};

use crate::admin::AdminArgs;
use crate::demo::DemoArgs;
use crate::settings::RunArgs;

/// The `async-worker` command line.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "async-worker",
    version,
    about = "Drains redis-sortedset request queues into an inference gateway, with claim/lease/ack so no accepted request is lost",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Flags of `run`, which is also what runs without a subcommand.
    #[command(flatten)]
    pub run: RunArgs,
}

impl Cli {
    /// The subcommand to run; no subcommand means `run` with the top-level flags.
    pub fn into_command(self) -> Command {
        self.command
            .unwrap_or_else(|| Command::Run(Box::new(self.run)))
    }
}

/// What the binary does.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Run the processor (the default).
    Run(Box<RunArgs>),
    /// Run the demo: replicas, a stand-in gateway, one replica hard-stopped mid-run.
    Demo(DemoArgs),
    /// Look at and steer the queues: stats, claims, dead entries, release, pause.
    Admin(AdminArgs),
}
