//! Where each of our own settings comes from: the transport config's field, else its flag, else the flag's environment variable, else the default; and the one table naming all three.
//!
//! The config wins because the spec says so: the claim flags "are ignored
//! when --transport-config/--transport-config-file supplies its own
//! values", and our other settings follow the same rule, so one config
//! file describes a deployment whatever flags its pods were started with.
//! Go's own flags keep Go's behaviour (no environment variable of ours);
//! `--redis-url` keeps Go's rule too: the config's `url` wins and
//! `REDIS_URL` fills it only when empty.

use std::fmt::Display;

/// One of our settings: its flag, environment variable and transport config field.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// The flag, without its dashes.
    pub flag: &'static str,
    pub env: &'static str,
    /// The transport config field (`queues[].…`: that of every queue).
    pub field: &'static str,
}

const fn setting(flag: &'static str, env: &'static str, field: &'static str) -> Setting {
    Setting { flag, env, field }
}

/// Our own flags (Go has none of them). `--igw-base-url` and
/// `--request-path-url` describe the default queue, which a transport config
/// replaces with its `queues`.
pub const OURS: [Setting; 13] = [
    setting(
        "igw-base-url",
        "ASYNC_WORKER_IGW_BASE_URL",
        "queues[].igw_base_url",
    ),
    setting(
        "request-path-url",
        "ASYNC_WORKER_REQUEST_PATH_URL",
        "queues[].request_path_url",
    ),
    setting(
        "claim-lease-ttl",
        "ASYNC_WORKER_CLAIM_LEASE_TTL",
        "claim_lease_ttl_seconds",
    ),
    setting(
        "claim-reclaim-interval",
        "ASYNC_WORKER_CLAIM_RECLAIM_INTERVAL",
        "claim_reclaim_interval_ms",
    ),
    setting(
        "result-dedup-ttl",
        "ASYNC_WORKER_RESULT_DEDUP_TTL",
        "result_dedup_ttl_seconds",
    ),
    setting(
        "max-deliveries",
        "ASYNC_WORKER_MAX_DELIVERIES",
        "max_deliveries",
    ),
    setting("bind-address", "ASYNC_WORKER_BIND_ADDRESS", "bind_address"),
    setting(
        "redis-tls-ca-file",
        "ASYNC_WORKER_REDIS_TLS_CA_FILE",
        "redis_tls_ca_file",
    ),
    setting(
        "redis-tls-cert-file",
        "ASYNC_WORKER_REDIS_TLS_CERT_FILE",
        "redis_tls_cert_file",
    ),
    setting(
        "redis-tls-key-file",
        "ASYNC_WORKER_REDIS_TLS_KEY_FILE",
        "redis_tls_key_file",
    ),
    setting("replica-acks", "ASYNC_WORKER_REPLICA_ACKS", "replica_acks"),
    setting(
        "require-durability",
        "ASYNC_WORKER_REQUIRE_DURABILITY",
        "require_durability",
    ),
    setting(
        "strict-config",
        "ASYNC_WORKER_STRICT_CONFIG",
        "strict_config",
    ),
];

/// The setting of `--flag`; every caller names a flag of [`OURS`].
pub fn ours(flag: &str) -> Setting {
    match OURS.iter().find(|s| s.flag == flag) {
        Some(s) => *s,
        None => unreachable!("--{flag} is not in settings::precedence::OURS"),
    }
}

/// Gives each flag of [`OURS`] its environment variable, wherever the
/// command declares it (the top level, `run`, `admin`), but not in `demo`,
/// whose `--claim-lease-ttl` is its own.
pub fn with_env_names(command: clap::Command) -> clap::Command {
    let named = |arg: clap::Arg| match OURS.iter().find(|s| arg.get_long() == Some(s.flag)) {
        Some(s) => arg.env(s.env),
        None => arg,
    };
    command
        .mut_args(named)
        .mut_subcommands(|sub| match sub.get_name() {
            "demo" => sub,
            _ => sub.mut_args(named),
        })
}

/// Names the environment variable when a value clap refused came from
/// one (clap's message names only the flag, which the operator never typed).
pub fn name_the_env_var(error: clap::Error, argv: &[std::ffi::OsString]) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if !matches!(
        error.kind(),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation
    ) {
        return error;
    }
    let Some(ContextValue::String(arg)) = error.get(ContextKind::InvalidArg) else {
        return error;
    };
    let typed = |flag: &str| {
        argv.iter().any(|a| {
            a.to_str()
                .is_some_and(|a| a == flag || a.starts_with(&format!("{flag}=")))
        })
    };
    let from_env = OURS.iter().find(|s| {
        let flag = format!("--{}", s.flag);
        arg.split(['=', ' ', '[']).next() == Some(flag.as_str())
            && std::env::var_os(s.env).is_some()
            && !typed(&flag)
    });
    let Some(setting) = from_env else {
        return error;
    };
    let rendered = error.render().to_string();
    let first = rendered.lines().next().unwrap_or_default();
    let message = first.strip_prefix("error: ").unwrap_or(first);
    clap::Error::raw(
        error.kind(),
        format!(
            "{message}; the value comes from the environment variable {}: correct it or unset it\n",
            setting.env
        ),
    )
}

/// Picks config over flag for one run's settings, noting each flag the
/// config overrode (logged at start).
pub struct Sources<'a> {
    /// How messages name the transport config.
    pub origin: &'a str,
    pub notes: &'a mut Vec<String>,
}

impl Sources<'_> {
    /// The configured value, else the flag's (from the command line or
    /// its environment variable); `None` when neither is given.
    pub fn pick<T: PartialEq>(
        &mut self,
        setting: Setting,
        flag: Option<T>,
        configured: Option<T>,
        show: impl Fn(&T) -> String,
    ) -> Option<T> {
        if let (Some(f), Some(c)) = (&flag, &configured)
            && f != c
        {
            self.notes.push(format!(
                "--{} {} (or {}) is ignored: {} sets {} to {}",
                setting.flag,
                show(f),
                setting.env,
                self.origin,
                setting.field,
                show(c),
            ));
        }
        configured.or(flag)
    }

    /// [`Sources::pick`] for a value shown as it displays.
    pub fn pick_shown<T: PartialEq + Display>(
        &mut self,
        setting: Setting,
        flag: Option<T>,
        configured: Option<T>,
    ) -> Option<T> {
        self.pick(setting, flag, configured, T::to_string)
    }
}
