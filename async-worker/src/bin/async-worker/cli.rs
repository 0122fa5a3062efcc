//! The `async-worker` command line: `run` (the default, also what runs without a subcommand), `demo`, `admin`, `completions` and `man`, and how an argv becomes one of them.

use std::ffi::OsString;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

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

/// What the binary does.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Run the processor (the default).
    Run(Box<RunArgs>),
    /// Run the demo: replicas, a stand-in gateway, one replica hard-stopped mid-run.
    Demo(DemoArgs),
    /// Look at and steer the queues: stats, claims, dead entries, release, pause.
    Admin(AdminArgs),
    /// Print a shell completion script for this command line to stdout.
    Completions {
        /// The shell to complete in.
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) of this command line to stdout.
    Man,
}

/// `async-worker <run flags> admin …`: the flags of `run` given before
/// `admin`. They are global here, so clap hands their values down to the
/// admin command; the full command line cannot do the same, because
/// globals would reach `demo`, whose `--claim-lease-ttl` is another type.
#[derive(Debug, Clone, Parser)]
#[command(name = "async-worker")]
struct RunFlagsThenAdmin {
    #[command(flatten)]
    run: RunArgs,
    #[command(subcommand)]
    admin: AdminOnly,
}

#[derive(Debug, Clone, Subcommand)]
enum AdminOnly {
    Admin(AdminArgs),
}

impl Cli {
    /// The subcommand to run; no subcommand means `run` with the top-level flags.
    pub fn into_command(self) -> Command {
        self.command
            .unwrap_or_else(|| Command::Run(Box::new(self.run)))
    }

    /// The command line as the binary parses it (help, completions and the
    /// man page are generated from it).
    pub fn full_command() -> clap::Command {
        with_admin_globals(Cli::command())
    }

    /// Parses the process's argv; on bad input prints clap's message and exits 2.
    pub fn parse_args() -> Cli {
        Self::try_parse_argv(std::env::args_os(), |c| c).unwrap_or_else(|e| e.exit())
    }

    /// Parses `argv` (program name first). `adjust` changes the command
    /// before parsing (the tests point `env` names elsewhere).
    ///
    /// The connection flags are accepted on either side of an admin command:
    /// within `admin` every flag of `run` is global, and when the full
    /// command line refuses flags given before `admin`, the argv is read
    /// again as `<run flags> admin …`.
    pub fn try_parse_argv(
        argv: impl IntoIterator<Item = impl Into<OsString>>,
        adjust: impl Fn(clap::Command) -> clap::Command,
    ) -> Result<Cli, clap::Error> {
        let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
        Self::parse_either_side(&argv, adjust).map_err(|e| name_the_env_var(e, &argv))
    }

    /// [`Cli::try_parse_argv`] before the environment variable is named.
    fn parse_either_side(
        argv: &[OsString],
        adjust: impl Fn(clap::Command) -> clap::Command,
    ) -> Result<Cli, clap::Error> {
        let refused = match adjust(Self::full_command()).try_get_matches_from(argv) {
            Ok(matches) => return Cli::from_arg_matches(&matches),
            Err(e) => e,
        };
        let shown = matches!(
            refused.kind(),
            ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        );
        // `admin` first is the full command line's own case: its error stands.
        let admin_later = argv.iter().skip(2).any(|a| a == "admin");
        if shown || !admin_later {
            return Err(refused);
        }
        let command = adjust(with_admin_globals(
            RunFlagsThenAdmin::command().mut_args(|a| a.global(true)),
        ));
        let matches = command.try_get_matches_from(argv)?;
        let parsed = RunFlagsThenAdmin::from_arg_matches(&matches)?;
        let AdminOnly::Admin(admin) = parsed.admin;
        Ok(Cli {
            command: Some(Command::Admin(admin)),
            run: parsed.run,
        })
    }
}

/// Names the environment variable when a value clap refused came from one
/// (clap's message names only the flag, which the operator never typed).
fn name_the_env_var(error: clap::Error, argv: &[OsString]) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let value_refused = matches!(
        error.kind(),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation
    );
    let refused = match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) if value_refused => arg,
        _ => return error,
    };
    let typed = |flag: &str| {
        let typed = |a: &str| a == flag || a.starts_with(&format!("{flag}="));
        argv.iter().any(|a| a.to_str().is_some_and(typed))
    };
    let command = Cli::full_command();
    let from_env = command.get_arguments().find_map(|arg| {
        let flag = format!("--{}", arg.get_long()?);
        let env = arg.get_env()?.to_str()?;
        let named = refused.split(['=', ' ', '[']).next() == Some(flag.as_str());
        (named && std::env::var_os(env).is_some() && !typed(&flag)).then(|| env.to_owned())
    });
    let Some(env) = from_env else {
        return error;
    };
    let rendered = error.render().to_string();
    let first = rendered.lines().next().unwrap_or_default();
    let message = first.strip_prefix("error: ").unwrap_or(first);
    clap::Error::raw(
        error.kind(),
        format!(
            "{message}; the value comes from the environment variable {env}: correct it or unset it\n"
        ),
    )
}

/// Makes every flag of `admin` (the flags of `run` among them) global within
/// it, so `admin dead list --transport-config-file F` reads the file.
fn with_admin_globals(command: clap::Command) -> clap::Command {
    command.mut_subcommand("admin", |admin| admin.mut_args(|a| a.global(true)))
}
