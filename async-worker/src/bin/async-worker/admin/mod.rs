//! `async-worker admin <command>`: the flags, the connection (exactly as `run` makes it), the exit codes, and one module per command.
//!
//! Exit codes: 0 on success; 1 when the store cannot be reached (or fails
//! mid-command); 2 on bad input (flags, transport config, an unknown queue,
//! an id that names nothing). Read commands print a table, or JSON with
//! `--json`. No command prints a payload unless `--show-payload` is given.

mod browse;
mod dead;
mod inspect;
mod output;
mod requeue;
mod stats;

use crate::settings::{BareUnit, ProcessorSettings, RunArgs, SettingsError, parse_flag_duration};
use async_worker::admin::stats::QueueRef;
use claim_core::StoreError;
use claim_redis::{ConnectError, RedisStore};
use clap::{Args, Subcommand};
use std::process::ExitCode;
use std::time::Duration;

/// `async-worker admin`: the connection flags of `run` (before or after
/// the command; they are global within `admin`), then the command.
#[derive(Debug, Clone, Args)]
pub struct AdminArgs {
    /// Print JSON instead of a table (read commands).
    #[arg(long, global = true)]
    pub json: bool,

    /// Print request payloads (`inspect`); never printed otherwise.
    #[arg(long, global = true)]
    pub show_payload: bool,

    /// The flags `run` takes: the same transport config, Redis URL and
    /// validation, before or after the command.
    #[command(
        flatten,
        next_help_heading = "Flags of run (the connection and transport config; before or after the command)"
    )]
    pub connect: Box<RunArgs>,

    #[command(subcommand)]
    pub command: AdminCommand,
}

/// What `async-worker admin` does.
#[derive(Debug, Clone, Subcommand)]
pub enum AdminCommand {
    /// Per queue: pending, claimed, expiring, ages, parked retries, dead, result lists, paused.
    Stats {
        /// One queue (default: every configured queue).
        #[arg(long, value_name = "Q")]
        queue: Option<String>,
        /// Print again every DURATION (Go syntax: 2s, 500ms) until interrupted.
        #[arg(long, value_name = "DURATION", value_parser = watch_interval)]
        watch: Option<Duration>,
    },
    /// One row per claim: request id, generation, owner, lease left, deliveries.
    Claims {
        #[arg(long, value_name = "Q")]
        queue: Option<String>,
        /// Only claims held by this owner token.
        #[arg(long, value_name = "TOKEN")]
        owner: Option<String>,
        /// Only claims whose lease has ended (awaiting the reclaimer).
        #[arg(long)]
        expired: bool,
    },
    /// A page of the pending set(s), earliest score first: id, generation, score, deadline, retries, age.
    Pending {
        #[command(flatten)]
        page: Page,
    },
    /// A page of the retry set, earliest due first: queue, id, generation, due, deadline, retries, age.
    Retries {
        #[command(flatten)]
        page: Page,
    },
    /// Cancel request ID as the Go producer does, and say where it is and what ends it.
    Cancel {
        /// The request id (`data.id`).
        id: String,
        /// Look for it only in this queue (the cancel itself is per id).
        #[arg(long, value_name = "Q")]
        queue: Option<String>,
    },
    /// Promote the parked retries of request ID to pending now, by the promoter's rules.
    RetryNow {
        /// The request id (`data.id`).
        id: String,
        /// Only retries bound for this queue.
        #[arg(long, value_name = "Q")]
        queue: Option<String>,
    },
    /// Where each generation of a request is now, and its envelope without the payload.
    Inspect {
        /// The request id (`data.id`).
        id: String,
    },
    /// Dead-lettered requests: list, redrive, purge.
    Dead {
        #[command(subcommand)]
        command: DeadCommand,
    },
    /// End a claim's lease now, whoever holds it: redelivered at once (for a stuck worker).
    Release {
        /// The request id (`data.id`).
        id: String,
        #[arg(long, value_name = "Q")]
        queue: Option<String>,
    },
    /// Every replica stops claiming from Q within one poll interval; in-flight work finishes.
    Pause {
        #[arg(value_name = "Q")]
        queue: String,
    },
    /// Every replica claims from Q again within one poll interval.
    Resume {
        #[arg(value_name = "Q")]
        queue: String,
    },
}

/// `async-worker admin dead …`.
#[derive(Debug, Clone, Subcommand)]
pub enum DeadCommand {
    /// Dead entries: request id, reason, when.
    List {
        #[arg(long, value_name = "Q")]
        queue: Option<String>,
    },
    /// Move dead entries back to pending at their original score, delivery count reset.
    Redrive {
        #[command(flatten)]
        which: Which,
        #[arg(long, value_name = "Q")]
        queue: Option<String>,
    },
    /// Delete dead entries for good.
    Purge {
        #[command(flatten)]
        which: Which,
        #[arg(long, value_name = "Q")]
        queue: Option<String>,
        /// Confirm the deletion (required).
        #[arg(long)]
        yes: bool,
    },
}

/// Which page `pending` and `retries` print.
#[derive(Debug, Clone, Args)]
pub struct Page {
    /// One queue (default: every configured queue; `retries`: every entry).
    #[arg(long, value_name = "Q")]
    pub queue: Option<String>,
    /// Entries per page (per queue).
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub limit: u32,
    /// Start above this score (the last score of the page before).
    #[arg(long, value_name = "SCORE", conflicts_with = "offset", value_parser = finite_score)]
    pub after: Option<f64>,
    /// Start at this rank (0: the head).
    #[arg(long, value_name = "N")]
    pub offset: Option<usize>,
}

impl Page {
    pub(super) fn from(&self) -> browse::From {
        match (self.after, self.offset) {
            (Some(score), _) => browse::From::After(score),
            (None, offset) => browse::From::Offset(offset.unwrap_or(0)),
        }
    }
}

fn finite_score(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(
            "not a finite number; give a score as `pending` prints it, such as 1796175855.0000005"
                .into(),
        ),
    }
}

/// Dead entries named by request id, or all of them.
#[derive(Debug, Clone, Args)]
#[group(required = true, multiple = false)]
pub struct Which {
    /// Request ids (`data.id`).
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// Every dead entry of the queue(s).
    #[arg(long)]
    pub all: bool,
}

fn watch_interval(s: &str) -> Result<Duration, String> {
    match parse_flag_duration(s, BareUnit::Seconds) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err("it is zero; give a positive duration such as 2s".into()),
        Err(e) => Err(format!("{e}; use Go syntax such as 2s or 500ms")),
    }
}

/// Why an admin command failed, and its exit code.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error("{0}; check that Redis is up and reachable, then run the command again")]
    Store(#[from] StoreError),
    /// The input names nothing usable: the message says what and the fix.
    #[error("{0}")]
    BadInput(String),
}

impl AdminError {
    /// 1 when the store cannot be reached or failed, 2 for bad input.
    pub fn exit_code(&self) -> u8 {
        match self {
            AdminError::Settings(_) | AdminError::BadInput(_) => 2,
            AdminError::Connect(
                ConnectError::Url { .. } | ConnectError::Config(_) | ConnectError::Option { .. },
            ) => 2,
            AdminError::Connect(_) | AdminError::Store(_) => 1,
        }
    }
}

/// What every command works with.
#[derive(Debug)]
pub struct Ctx {
    pub store: RedisStore,
    pub settings: ProcessorSettings,
    pub json: bool,
    pub show_payload: bool,
}

impl Ctx {
    /// How often a worker with these settings renews its claims (and reads
    /// their cancel keys), for messages.
    pub fn heartbeat(&self) -> String {
        let ttl = Duration::from_millis(claim_core::ClaimStore::config(&self.store).lease_ttl_ms);
        output::duration(Some(
            claim_core::lease::heartbeat_interval(ttl).as_millis() as u64
        ))
    }

    /// The configured queues, or the one `--queue` names (it must be configured).
    pub fn queues(&self, only: Option<&str>) -> Result<Vec<QueueRef>, AdminError> {
        let configured: Vec<&str> = self
            .settings
            .runtime
            .queues
            .iter()
            .map(|q| q.queue_name.as_str())
            .collect();
        let names = match only {
            None => configured,
            Some(q) if configured.contains(&q) => vec![q],
            Some(q) => {
                return Err(AdminError::BadInput(format!(
                    "queue {q:?} is not in the transport config (its queues: {}); name one of them, or pass the transport config the workers run with",
                    configured.join(", ")
                )));
            }
        };
        Ok(names
            .into_iter()
            .map(|q| QueueRef::from_config(&self.store, q))
            .collect())
    }
}

/// Runs one admin command: resolves the settings as `run` does, connects,
/// runs, and maps the outcome to the exit code.
pub async fn run(args: AdminArgs) -> ExitCode {
    match execute(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("async-worker admin: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

async fn execute(args: AdminArgs) -> Result<(), AdminError> {
    let mut connect = *args.connect;
    // The gateway is never called here: a config without one is still
    // good enough to find Redis and the queues.
    if connect.igw_base_url.is_none() {
        connect.igw_base_url = Some("http://gateway.unused.invalid".into());
    }
    let settings = connect.resolve()?;
    let store = RedisStore::connect(settings.redis_options()).await?;
    let ctx = Ctx {
        store,
        settings,
        json: args.json,
        show_payload: args.show_payload,
    };
    match args.command {
        AdminCommand::Stats { queue, watch } => stats::run(&ctx, queue.as_deref(), watch).await,
        AdminCommand::Claims {
            queue,
            owner,
            expired,
        } => browse::claims(&ctx, queue.as_deref(), owner.as_deref(), expired).await,
        AdminCommand::Pending { page } => browse::pending(&ctx, &page).await,
        AdminCommand::Retries { page } => browse::retries(&ctx, &page).await,
        AdminCommand::Cancel { id, queue } => inspect::cancel(&ctx, &id, queue.as_deref()).await,
        AdminCommand::RetryNow { id, queue } => {
            requeue::retry_now(&ctx, &id, queue.as_deref()).await
        }
        AdminCommand::Inspect { id } => inspect::inspect(&ctx, &id).await,
        AdminCommand::Dead { command } => match command {
            DeadCommand::List { queue } => dead::list(&ctx, queue.as_deref()).await,
            DeadCommand::Redrive { which, queue } => {
                dead::redrive(&ctx, &which, queue.as_deref()).await
            }
            DeadCommand::Purge { which, queue, yes } => {
                dead::purge(&ctx, &which, queue.as_deref(), yes).await
            }
        },
        AdminCommand::Release { id, queue } => requeue::release(&ctx, &id, queue.as_deref()).await,
        AdminCommand::Pause { queue } => stats::pause(&ctx, &queue, true).await,
        AdminCommand::Resume { queue } => stats::pause(&ctx, &queue, false).await,
    }
}
