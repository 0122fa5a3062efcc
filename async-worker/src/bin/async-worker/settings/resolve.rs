//! Turns [`RunArgs`] and the transport config into [`ProcessorSettings`], checking every value.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use claim_core::store::StoreConfig;
use claim_core::wire;
use reqwest::Url;

use super::allow::{allow_list, queue_allow_lists};
use super::error::SettingsError;
use super::precedence::{Sources, ours};
use super::queues::{configured_queues, default_queue};
use super::transport::{TransportConfig, count, positive, set};
use super::{ProcessorSettings, RunArgs};
use async_worker::config::RuntimeConfig;
use async_worker::go_duration::{BareUnit, format_duration, parse_flag_duration};

const TRANSPORT: &str = "redis-sortedset";

/// A claim duration: its flag (or env) over its transport config field.
struct ClaimDuration {
    /// The flag, without its dashes (its entry in `precedence::OURS`).
    flag: &'static str,
    /// The flag's value when it is not given.
    default: &'static str,
    /// The unit of a bare number, and of the config field.
    unit: BareUnit,
}

/// The claim lease, the reclaim interval and the result dedup TTL.
const CLAIM_DURATIONS: [ClaimDuration; 3] = [
    ClaimDuration {
        flag: "claim-lease-ttl",
        default: "300s",
        unit: BareUnit::Seconds,
    },
    ClaimDuration {
        flag: "claim-reclaim-interval",
        default: "15000ms",
        unit: BareUnit::Milliseconds,
    },
    ClaimDuration {
        flag: "result-dedup-ttl",
        default: "21600s",
        unit: BareUnit::Seconds,
    },
];

pub(super) fn resolve(args: &RunArgs) -> Result<ProcessorSettings, SettingsError> {
    if let Some(name) = args.transport.as_deref().filter(|t| *t != TRANSPORT) {
        return Err(SettingsError::UnknownTransport { name: name.into() });
    }
    let mut notes = Vec::new();
    let backlog_poll = super::compat::check_go_flags(&args.go, &mut notes)?;
    let log_format = super::compat::log_format(&args.go)?;
    let log_level = super::compat::log_level(&args.go)?;
    // As in Go: any --transport* flag makes the deprecated flags ignored.
    let new_flags = args.transport.is_some()
        || args.transport_config.is_some()
        || args.transport_config_file.is_some();
    // (config, how messages name it, whether the deprecated flags built it)
    let loaded = match super::legacy::legacy_config(args, new_flags, &mut notes)? {
        Some(config) => Some((config, super::legacy::ORIGIN.to_owned(), true)),
        None => load_config(args)?.map(|(config, origin)| (config, origin, false)),
    };
    let (config, origin) = match &loaded {
        Some((config, origin, _)) => (config.clone(), origin.as_str()),
        None => (TransportConfig::default(), "transport config"),
    };
    let strict = Sources {
        origin,
        notes: &mut notes,
    }
    .pick_shown(
        ours("strict-config"),
        args.strict_config,
        config.strict_config,
    );
    for field in config.unknown_fields() {
        if strict == Some(true) {
            return Err(SettingsError::UnknownConfigField {
                origin: origin.to_owned(),
                field,
                detail: "--strict-config refuses fields this processor does not know".into(),
            });
        }
        notes.push(format!(
            "{origin}: unknown field {field} is ignored (as the Go processor ignores it); remove it or correct its spelling (--strict-config refuses it)"
        ));
    }
    // Go's per-command Redis spans (`--redis-tracing` is mapped onto it).
    let redis_tracing = config.enable_tracing == Some(true);

    // The Go flags and the config's shape are checked above; here every
    // duration flag is parsed before any config value is checked, in this
    // order, so the first error reported stays the same.
    let given = [
        args.claim_lease_ttl.as_deref(),
        args.claim_reclaim_interval.as_deref(),
        args.result_dedup_ttl.as_deref(),
    ];
    let mut flag_values = [Duration::ZERO; 3];
    for (slot, (d, value)) in flag_values
        .iter_mut()
        .zip(CLAIM_DURATIONS.iter().zip(given))
    {
        *slot = flag_duration(&format!("--{}", d.flag), value.unwrap_or(d.default), d.unit)?;
    }
    let timeout = |flag, value| flag_duration(flag, value, BareUnit::Seconds);
    let request_timeout = timeout("--request-timeout", &args.request_timeout)?;
    let drain_timeout = timeout("--drain-timeout", &args.drain_timeout)?;

    let mut sources = Sources {
        origin,
        notes: &mut notes,
    };
    let from_config = [
        config.claim_lease_ttl_seconds,
        config.claim_reclaim_interval_ms,
        config.result_dedup_ttl_seconds,
    ];
    let mut claim = [Duration::ZERO; 3];
    for (i, d) in CLAIM_DURATIONS.iter().enumerate() {
        let setting = ours(d.flag);
        let configured = positive(from_config[i], origin, setting.field)?.map(|n| d.unit.times(n));
        let flag = given[i].map(|_| flag_values[i]);
        claim[i] = sources
            .pick(setting, flag, configured, |v| format_duration(*v))
            .unwrap_or(flag_values[i]);
    }
    let [lease, reclaim, dedup] = claim;
    let configured_deliveries = count(
        config.max_deliveries,
        origin,
        "max_deliveries",
        "give it a whole number from 0 (unlimited) to 4294967295",
    )?;
    let max_deliveries = sources
        .pick_shown(
            ours("max-deliveries"),
            args.max_deliveries,
            configured_deliveries,
        )
        .unwrap_or(10);
    let bind_address = sources
        .pick_shown(
            ours("bind-address"),
            args.bind_address,
            bind_address(&config, origin)?,
        )
        .unwrap_or(IpAddr::V6(Ipv6Addr::UNSPECIFIED));
    let require_durability = sources
        .pick_shown(
            ours("require-durability"),
            args.require_durability,
            config.require_durability,
        )
        .unwrap_or(false);
    let poll_ms = positive(config.poll_interval_ms, origin, "poll_interval_ms")?.unwrap_or(1000);
    let batch_size = positive(config.batch_size, origin, "batch_size")?.unwrap_or(10);

    let redis_url = redis_url(&config, origin, args.redis_url.as_deref())?;
    let redis_mode = super::mode::check_mode(&config, origin, &redis_url)?;
    let (redis_tls, replica_acks) =
        super::mode::connection_extras(&config, args, origin, &redis_url, &mut notes)?;
    let queues = match &loaded {
        Some((_, _, legacy)) => {
            if args.igw_base_url.is_some() && !legacy {
                notes.push(format!(
                    "--igw-base-url is ignored: {origin} configures the queues"
                ));
            }
            configured_queues(config.queues.as_deref(), origin)?
        }
        None => vec![default_queue(args)?],
    };

    let result_list = set(&config.result_queue_name).unwrap_or(wire::DEFAULT_RESULT_LIST);
    let store = StoreConfig {
        lease_ttl_ms: millis(lease),
        result_dedup_ttl_ms: millis(dedup),
        max_deliveries,
        retry_set: set(&config.retry_queue_name)
            .unwrap_or(wire::DEFAULT_RETRY_SET)
            .to_owned(),
        default_queue: queues[0].0.queue_name.clone(),
        default_result_list: result_list.to_owned(),
        queue_result_lists: queues
            .iter()
            .filter_map(|(spec, _)| {
                let list = spec.result_queue_name.clone()?;
                Some((spec.queue_name.clone(), list))
            })
            .collect(),
        queue_result_ttls: queues
            .iter()
            .filter_map(|(spec, _)| Some((spec.queue_name.clone(), spec.result_ttl_seconds?)))
            .collect(),
        allowed_result_lists: allow_list(&config.allowed_result_lists, origin, "")?,
        queue_allowed_result_lists: queue_allow_lists(&config, origin)?,
    };

    let flow = super::flow::resolve_flow(&args.go, loaded.is_some(), super::compat::go_duration)?;
    if !flow.pools.is_empty()
        && let Some((spec, _)) = queues
            .iter()
            .find(|(spec, _)| !flow.pools.iter().any(|p| p.id == spec.pool_name))
    {
        return Err(SettingsError::invalid(
            "--pool-config-file",
            format!(
                "worker pool {:?} specified in queue config not found in pool configuration",
                spec.pool_name
            ),
            "list the pool in the pools file, or set the queue's worker_pool_id to a listed pool",
        ));
    }
    let poll_interval = Duration::from_millis(poll_ms);
    let runtime = RuntimeConfig {
        pools: flow.pools.iter().map(|p| p.spec()).collect(),
        gate_wait_timeout: flow.gate_wait_timeout,
        queues: queues.iter().map(|(spec, _)| spec.clone()).collect(),
        concurrency: args.concurrency,
        batch_size: usize::try_from(batch_size).unwrap_or(usize::MAX),
        poll_interval,
        request_timeout,
        drain_timeout,
        reclaim_interval: reclaim,
        promote_interval: poll_interval,
        backlog_poll_interval: backlog_poll,
        ..RuntimeConfig::default()
    };
    if args.concurrency == 0 {
        return Err(SettingsError::invalid(
            "--concurrency",
            "0 handles nothing",
            "give it at least 1 (default 64)",
        ));
    }
    runtime.validate().map_err(|detail| {
        SettingsError::invalid(
            "runtime settings",
            detail.to_string(),
            "adjust the flags or config fields named",
        )
    })?;
    super::bounds::check_bounds(&store, &runtime)?;
    store.validate().map_err(|detail| {
        SettingsError::invalid(
            "claim settings",
            detail,
            "adjust the flags or config fields named",
        )
    })?;
    super::bounds::check_key_names(&store, &runtime)?;

    let addr = |port: u16| (port != 0).then(|| SocketAddr::new(bind_address, port));
    Ok(ProcessorSettings {
        redis_url,
        redis_mode,
        redis_tls,
        replica_acks,
        store,
        runtime,
        queues: queues.into_iter().map(|(_, q)| q).collect(),
        metrics_addr: addr(args.metrics_port),
        health_addr: addr(args.health_port),
        require_durability,
        log_format,
        log_level,
        redis_tracing,
        flow,
        notes,
    })
}

/// The transport config and how error messages name it, when one was given.
fn load_config(args: &RunArgs) -> Result<Option<(TransportConfig, String)>, SettingsError> {
    if let Some(json) = &args.transport_config {
        let origin = "--transport-config".to_owned();
        return Ok(Some((TransportConfig::from_json(json, &origin)?, origin)));
    }
    let Some(path) = &args.transport_config_file else {
        return Ok(None);
    };
    let text =
        std::fs::read_to_string(path).map_err(|source| SettingsError::UnreadableConfigFile {
            flag: "--transport-config-file".into(),
            path: path.clone(),
            source,
        })?;
    let origin = format!("--transport-config-file {}", path.display());
    Ok(Some((TransportConfig::from_json(&text, &origin)?, origin)))
}

fn flag_duration(flag: &str, value: &str, unit: BareUnit) -> Result<Duration, SettingsError> {
    let fix = format!(
        "give a positive Go duration such as 300s, 1m30s or 500ms, or a bare number of {}",
        unit.name()
    );
    let error = |reason: String| SettingsError::Duration {
        field: flag.to_owned(),
        value: value.to_owned(),
        reason,
        fix: fix.clone(),
    };
    match parse_flag_duration(value, unit) {
        Ok(d) if d.is_zero() => Err(error("it is zero".into())),
        Ok(d) => Ok(d),
        Err(e) => Err(error(e.to_string())),
    }
}

/// The config's `bind_address`, an IP address; `""` and `null` are unset.
fn bind_address(config: &TransportConfig, origin: &str) -> Result<Option<IpAddr>, SettingsError> {
    let Some(text) = set(&config.bind_address) else {
        return Ok(None);
    };
    text.parse()
        .map(Some)
        .map_err(|e| SettingsError::ConfigValue {
            origin: origin.to_owned(),
            field: "bind_address".into(),
            detail: format!("{text:?} is not an IP address ({e})"),
            fix: "give an IP address such as 0.0.0.0, 127.0.0.1 or ::".into(),
        })
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn redis_url(
    config: &TransportConfig,
    origin: &str,
    flag: Option<&str>,
) -> Result<String, SettingsError> {
    let (url, field) = match (set(&config.url), flag.filter(|u| !u.is_empty())) {
        (Some(url), _) => (url, format!("{origin} url")),
        (None, Some(url)) => (url, "--redis-url (or REDIS_URL)".to_owned()),
        (None, None) => return Err(SettingsError::MissingRedisUrl),
    };
    let error = |reason: String| SettingsError::RedisUrl {
        field: field.clone(),
        url: redact_url(url),
        reason,
    };
    let parsed = Url::parse(url).map_err(|e| error(e.to_string()))?;
    match parsed.scheme() {
        "redis" | "rediss" if parsed.host_str().is_none_or(str::is_empty) => {
            Err(error("it names no host".into()))
        }
        "redis" | "rediss" | "unix" | "redis+unix" => Ok(url.to_owned()),
        other => Err(error(format!("scheme {other:?}"))),
    }
}

/// The URL with its password (or a lone user part, which redis-rs reads as
/// the password) replaced by `***`, for messages and logs.
pub fn redact_url(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            } else if !parsed.username().is_empty() {
                let _ = parsed.set_username("***");
            } else {
                return url.to_owned();
            }
            parsed.to_string()
        }
        Err(_) => match (url.split_once("://"), url.rsplit_once('@')) {
            (Some((scheme, _)), Some((_, host))) => format!("{scheme}://***@{host}"),
            _ => url.to_owned(),
        },
    }
}
