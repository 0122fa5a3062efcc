//! The demo's flags: store, size, replicas, when to hard-stop one, lease, payloads by reference.

use std::time::Duration;

use clap::Args;

use crate::settings::{BareUnit, parse_flag_duration};

/// The demo's flags.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Run on this Redis, replicas as child processes killed with SIGKILL; default: the in-process memory store.
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,

    /// Requests to submit.
    #[arg(long, value_name = "N", default_value_t = 5000)]
    pub requests: usize,

    /// Worker replicas.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub replicas: usize,

    /// Hard-stop one replica once this fraction of the requests has a terminal record.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.3, value_parser = fraction)]
    pub kill_after: f64,

    /// Claim lease of the replicas: how soon the stopped replica's claims are redelivered [bare number = seconds].
    #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = lease)]
    pub claim_lease_ttl: Duration,

    /// Requests each replica handles at once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub concurrency: usize,

    /// Share of the requests submitted by reference, as Go's producer does with `WithPayloadKeys`: payload stored apart at `request-payload:<id>:<token>`, `"payload":null` in the member.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.5, value_parser = share)]
    pub payload_ref: f64,

    /// Of the requests submitted by reference, how many have no payload stored: each must end `PAYLOAD_UNAVAILABLE`.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub missing_payloads: usize,
}

fn share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err("expected a fraction from 0 to 1, such as 0.5".into()),
    }
}

fn fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..1.0).contains(&f) => Ok(f),
        _ => Err("expected a fraction from 0 up to (not including) 1, such as 0.3".into()),
    }
}

fn lease(s: &str) -> Result<Duration, String> {
    match parse_flag_duration(s, BareUnit::Seconds) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err("it is zero; give a positive duration such as 2s".into()),
        Err(e) => Err(format!("{e}; use Go syntax such as 2s or 1500ms")),
    }
}
