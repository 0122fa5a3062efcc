//! Turns [`RunArgs`] and the transport config into [`ProcessorSettings`]: one function per setting of ours (their common rule is `Sources::ours`: the config's field, else the flag or its variable, else the default), each value parsed and checked as it is read; then `validate` checks the whole.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use claim_core::store::StoreConfig;
use claim_core::wire;

use super::config::{load, set};
use super::sources::Sources;
use super::validate::validate;
use super::{ProcessorSettings, RunArgs, SettingsError, go, queues, redis};
use async_worker::config::RuntimeConfig;
use async_worker::go_duration::{BareUnit, format_duration, parse_flag_duration};

const TRANSPORT: &str = "redis-sortedset";

impl Sources<'_> {
    /// A claim duration of ours: the config's `field` (a whole number of
    /// `unit`s), else the flag's value (`given`, parsed), else `default`.
    fn claim_duration(
        &mut self,
        (flag, given): (&str, Option<Duration>),
        (field, configured): (&str, Option<i64>),
        (unit, default): (BareUnit, Duration),
    ) -> Result<Duration, SettingsError> {
        let configured = self.positive(configured, field)?.map(|n| unit.times(n));
        let value = self.ours(flag, field, (given, configured), |d| format_duration(*d));
        Ok(value.unwrap_or(default))
    }

    /// `bind_address`, parsed when set.
    fn bind_address(&self) -> Result<Option<IpAddr>, SettingsError> {
        let Some(text) = set(&self.config.bind_address) else {
            return Ok(None);
        };
        text.parse().map(Some).map_err(|e| {
            let fix = "give an IP address such as 0.0.0.0, 127.0.0.1 or ::";
            self.error(
                "bind_address",
                format!("{text:?} is not an IP address ({e})"),
                fix,
            )
        })
    }

    /// Each unknown config field: a note naming the closest known one, or
    /// under `--strict-config` the refusal.
    fn check_unknown_fields(&mut self, strict: bool) -> Result<(), SettingsError> {
        for (field, closest) in self.config.unknown_fields() {
            let hint = closest
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            let origin = &self.origin;
            if strict {
                let detail = "--strict-config refuses fields this processor does not know";
                let (origin, detail) = (origin.clone(), format!("{detail}{hint}"));
                return Err(SettingsError::UnknownConfigField {
                    origin,
                    field,
                    detail,
                });
            }
            let remove = if hint.is_empty() {
                "; remove"
            } else {
                " Remove"
            };
            self.notes.push(format!(
                "{origin}: unknown field {field} is ignored (as the Go processor ignores it){hint}{remove} it or correct its spelling (--strict-config refuses it)"
            ));
        }
        Ok(())
    }
}

impl RunArgs {
    /// Resolves flags, the transport config and `REDIS_URL` into settings.
    pub fn resolve(&self) -> Result<ProcessorSettings, SettingsError> {
        let args = self;
        if let Some(name) = args.transport.as_deref().filter(|t| *t != TRANSPORT) {
            return Err(SettingsError::unsupported(
                format!("--transport {name:?}"),
                "this processor speaks only redis-sortedset",
                "drop the flag or set --transport redis-sortedset",
            ));
        }
        let mut notes = Vec::new();
        let backlog_poll = go::check_go_flags(&args.go, &mut notes)?;
        let log_format = go::log_format(&args.go)?;
        let log_level = go::log_level(&args.go)?;
        // The config, how messages name it, and whether the deprecated flags built it.
        let (config, origin, legacy) = match go::legacy_config(args, &mut notes)? {
            Some(config) => (Some(config), go::LEGACY_ORIGIN.to_owned(), true),
            None => match load(
                ("--transport-config", args.transport_config.as_ref()),
                (
                    "--transport-config-file",
                    args.transport_config_file.as_ref(),
                ),
                "the transport config must be a JSON object",
            )? {
                Some((config, origin)) => (Some(config), origin, false),
                None => (None, "transport config".into(), false),
            },
        };
        let configured = config.is_some();
        let mut s = Sources {
            args,
            config: config.unwrap_or_default(),
            origin,
            notes,
        };
        let strict = (args.strict_config, s.config.strict_config);
        let strict = s.ours("strict-config", "strict_config", strict, bool::to_string);
        s.check_unknown_fields(strict == Some(true))?;

        // Every duration flag is parsed before any config value is checked, so
        // the first error reported stays the one it always was.
        let (secs, ms) = (BareUnit::Seconds, BareUnit::Milliseconds);
        let lease = flag_duration("--claim-lease-ttl", &args.claim_lease_ttl, secs)?;
        let reclaim = flag_duration("--claim-reclaim-interval", &args.claim_reclaim_interval, ms)?;
        let dedup = flag_duration("--result-dedup-ttl", &args.result_dedup_ttl, secs)?;
        let request_timeout = flag_duration("--request-timeout", &args.request_timeout, secs)?;
        let drain_timeout = flag_duration("--drain-timeout", &args.drain_timeout, secs)?;

        let c = s.config.clone();
        // Each of ours: the config's field, else the flag (or its variable), else the default.
        let lease = s.claim_duration(
            ("claim-lease-ttl", lease),
            ("claim_lease_ttl_seconds", c.claim_lease_ttl_seconds),
            (secs, Duration::from_secs(300)),
        )?;
        let reclaim = s.claim_duration(
            ("claim-reclaim-interval", reclaim),
            ("claim_reclaim_interval_ms", c.claim_reclaim_interval_ms),
            (ms, Duration::from_secs(15)),
        )?;
        let dedup = s.claim_duration(
            ("result-dedup-ttl", dedup),
            ("result_dedup_ttl_seconds", c.result_dedup_ttl_seconds),
            (secs, Duration::from_secs(21_600)),
        )?;
        let fix = "give it a whole number from 0 (unlimited) to 4294967295";
        let sources = (
            args.max_deliveries,
            s.count(c.max_deliveries, "max_deliveries", fix)?,
        );
        let max_deliveries = s.ours("max-deliveries", "max_deliveries", sources, u32::to_string);
        let sources = (args.bind_address, s.bind_address()?);
        let bind_address = s.ours("bind-address", "bind_address", sources, IpAddr::to_string);
        let sources = (args.require_durability, c.require_durability);
        let durability = "require_durability";
        let require_durability = s.ours("require-durability", durability, sources, bool::to_string);
        let poll_ms = s.positive(s.config.poll_interval_ms, "poll_interval_ms")?;
        let batch_size = s.positive(s.config.batch_size, "batch_size")?.unwrap_or(10);

        let redis_url = redis::url(&s.config, &s.origin, args.redis_url.as_deref())?;
        let redis_mode = redis::mode(&s, &redis_url)?;
        let redis_tls = redis::tls_files(&mut s);
        let replica_acks = redis::replica_acks(&mut s)?;
        let queues = if configured {
            if args.igw_base_url.is_some() && !legacy {
                let note = format!(
                    "--igw-base-url is ignored: {} configures the queues",
                    s.origin
                );
                s.notes.push(note);
            }
            queues::configured(&s)?
        } else {
            vec![queues::default_queue(args)?]
        };

        let config = &s.config;
        let store = StoreConfig {
            lease_ttl_ms: millis(lease),
            result_dedup_ttl_ms: millis(dedup),
            max_deliveries: max_deliveries.unwrap_or(10),
            retry_set: set(&config.retry_queue_name)
                .unwrap_or(wire::DEFAULT_RETRY_SET)
                .to_owned(),
            default_queue: queues[0].0.queue_name.clone(),
            default_result_list: (set(&config.result_queue_name))
                .unwrap_or(wire::DEFAULT_RESULT_LIST)
                .to_owned(),
            queue_result_lists: (queues.iter())
                .filter_map(|(spec, _)| {
                    Some((spec.queue_name.clone(), spec.result_queue_name.clone()?))
                })
                .collect(),
            queue_result_ttls: (queues.iter())
                .filter_map(|(spec, _)| Some((spec.queue_name.clone(), spec.result_ttl_seconds?)))
                .collect(),
            allowed_result_lists: queues::allow_list(&s, &config.allowed_result_lists, "")?,
            queue_allowed_result_lists: queues::queue_allow_lists(&s)?,
        };
        let flow = super::flow::resolve_flow(&args.go, configured)?;
        let poll_interval = Duration::from_millis(poll_ms.unwrap_or(1000));
        let runtime = RuntimeConfig {
            pools: flow.pools.iter().map(|p| p.spec()).collect(),
            gate_wait_timeout: flow.gate_wait_timeout,
            queues: queues.iter().map(|(spec, _)| spec.clone()).collect(),
            concurrency: args.concurrency,
            batch_size: usize::try_from(batch_size).unwrap_or(usize::MAX),
            poll_interval,
            request_timeout: request_timeout.unwrap_or_default(),
            drain_timeout: drain_timeout.unwrap_or_default(),
            reclaim_interval: reclaim,
            promote_interval: poll_interval,
            backlog_poll_interval: backlog_poll,
            ..RuntimeConfig::default()
        };
        let bind_address = bind_address.unwrap_or(IpAddr::V6(Ipv6Addr::UNSPECIFIED));
        let addr = |port: u16| (port != 0).then(|| SocketAddr::new(bind_address, port));
        let settings = ProcessorSettings {
            redis_url,
            redis_mode,
            redis_tls,
            replica_acks,
            store,
            runtime,
            queues: queues.into_iter().map(|(_, q)| q).collect(),
            metrics_addr: addr(args.metrics_port),
            health_addr: addr(args.health_port),
            require_durability: require_durability == Some(true),
            log_format,
            log_level,
            redis_tracing: s.config.enable_tracing == Some(true),
            flow,
            notes: s.notes,
        };
        validate(&settings)?;
        Ok(settings)
    }
}

/// A duration flag, when given (`value`: an `Option` or the value of a
/// flag with a default): Go syntax or a bare number of `unit`s, above zero.
fn flag_duration<'a>(
    flag: &str,
    value: impl Into<Option<&'a String>>,
    unit: BareUnit,
) -> Result<Option<Duration>, SettingsError> {
    let Some(value) = value.into() else {
        return Ok(None);
    };
    let reason = match parse_flag_duration(value, unit) {
        Ok(d) if !d.is_zero() => return Ok(Some(d)),
        Ok(_) => "it is zero".to_owned(),
        Err(e) => e.to_string(),
    };
    let fix = format!(
        "give a positive Go duration such as 300s, 1m30s or 500ms, or a bare number of {}",
        unit.name()
    );
    let input = format!("{flag} {value:?} is not usable");
    Err(SettingsError::invalid(input, reason, fix))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
