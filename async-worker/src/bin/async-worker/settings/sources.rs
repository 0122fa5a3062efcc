//! One run's inputs, the flags (with their variables), the transport config and the notes logged at start, and the one rule each of our settings follows: the config's field, else the flag, else the default.
//!
//! The config wins because the spec says so ("ignored when --transport-config
//! supplies its own values"), so one config file describes a deployment
//! whatever flags its pods were started with; a flag it overrode is noted.

use super::config::TransportConfig;
use super::{RunArgs, SettingsError};

/// One run's inputs: the flags, the transport config (empty without one)
/// and how messages name it, and the notes logged at start.
pub(super) struct Sources<'a> {
    pub args: &'a RunArgs,
    pub config: TransportConfig,
    pub origin: String,
    pub notes: Vec<String>,
}

impl Sources<'_> {
    /// One of our settings: the config's value, else the flag's (from the
    /// command line or its variable); notes a flag the config overrode.
    pub fn ours<T: PartialEq>(
        &mut self,
        flag: &str,
        field: &str,
        (given, configured): (Option<T>, Option<T>),
        show: impl Fn(&T) -> String,
    ) -> Option<T> {
        if let (Some(f), Some(c)) = (&given, &configured)
            && f != c
        {
            let (env, origin) = (env_of(flag), &self.origin);
            let (f, c) = (show(f), show(c));
            self.notes.push(format!(
                "--{flag} {f} (or {env}) is ignored: {origin} sets {field} to {c}"
            ));
        }
        configured.or(given)
    }

    /// A positive count or duration from the config: `None` when unset
    /// (absent, null or 0, as in Go); an error naming the field when negative.
    pub fn positive(&self, value: Option<i64>, field: &str) -> Result<Option<u64>, SettingsError> {
        match value {
            Some(v) if v < 0 => {
                let fix = "give it a positive number, or 0 / leave it out for the default";
                Err(self.error(field, format!("{v} is negative"), fix))
            }
            None | Some(0) => Ok(None),
            Some(v) => Ok(Some(v.unsigned_abs())),
        }
    }

    /// A config count that must fit 32 bits; `fix` says what to give instead.
    pub fn count(
        &self,
        value: Option<impl Copy + std::fmt::Display + TryInto<u32>>,
        field: &str,
        fix: &str,
    ) -> Result<Option<u32>, SettingsError> {
        let Some(n) = value else {
            return Ok(None);
        };
        (n.try_into().map(Some)).map_err(|_| self.error(field, format!("{n} is out of range"), fix))
    }

    /// A config error at `field` naming this config.
    pub fn error(&self, field: impl Into<String>, detail: String, fix: &str) -> SettingsError {
        SettingsError::invalid(format!("{}: {}", self.origin, field.into()), detail, fix)
    }
}

/// The environment variable of one of our flags (`claim-lease-ttl`:
/// `ASYNC_WORKER_CLAIM_LEASE_TTL`), as `args.rs` declares it.
pub fn env_of(flag: &str) -> String {
    format!("ASYNC_WORKER_{}", flag.to_uppercase().replace('-', "_"))
}
