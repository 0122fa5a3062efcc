//! How the processor reaches Redis: the URL (Go's rule), the transport config's `mode`, `addrs` and `master_name` (Go's rules and messages) mapped onto the store's [`Topology`], and our TLS files and `replica_acks`.
//!
//! Go accepts `""`/`standalone`, `cluster` and `sentinel`; the checks run in
//! Go's order and name the field. The URL stays the first node (cluster) or
//! the first sentinel, and carries credentials, `rediss://` and the db.
//! TLS files and `replica_acks` are ours (Go has neither): as for every
//! setting of ours, the config wins over the flag (or its variable).

use std::path::PathBuf;

use claim_redis::Topology;
use reqwest::Url;

use super::SettingsError;
use super::config::{TransportConfig, set};
use super::sources::Sources;

/// TLS files for a `rediss://` URL; all unset = the system's roots, no
/// client certificate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedisTls {
    /// PEM bundle of the CA(s) that sign the Redis server's certificate.
    pub ca_file: Option<PathBuf>,
    /// PEM client certificate, for a server with `tls-auth-clients yes`.
    pub cert_file: Option<PathBuf>,
    /// The client certificate's PEM private key.
    pub key_file: Option<PathBuf>,
}

/// The Redis URL: the config's `url`, else `--redis-url` (or `REDIS_URL`), as in Go.
pub(super) fn url(
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
        url: claim_redis::redact(url),
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

/// `redis_tls_ca_file`, `redis_tls_cert_file` and `redis_tls_key_file`,
/// each over its flag (`--redis-tls-ca-file`…); unset by default.
pub(super) fn tls_files(s: &mut Sources) -> RedisTls {
    let (args, config) = (s.args, s.config.clone());
    let [ca_file, cert_file, key_file] = [
        (
            "redis-tls-ca-file",
            &args.redis_tls_ca_file,
            config.redis_tls_ca_file,
        ),
        (
            "redis-tls-cert-file",
            &args.redis_tls_cert_file,
            config.redis_tls_cert_file,
        ),
        (
            "redis-tls-key-file",
            &args.redis_tls_key_file,
            config.redis_tls_key_file,
        ),
    ]
    .map(|(flag, given, configured)| {
        let sources = (given.clone(), set(&configured).map(PathBuf::from));
        s.ours(flag, &flag.replace('-', "_"), sources, |p| {
            p.display().to_string()
        })
    });
    RedisTls {
        ca_file,
        cert_file,
        key_file,
    }
}

/// `replica_acks`, else `--replica-acks`, else 0.
pub(super) fn replica_acks(s: &mut Sources) -> Result<u32, SettingsError> {
    let (field, fix) = (
        "replica_acks",
        "give the number of replicas to wait for, e.g. 1",
    );
    let configured = s.count(s.positive(s.config.replica_acks, field)?, field, fix)?;
    let sources = (s.args.replica_acks, configured);
    Ok(s.ours("replica-acks", field, sources, u32::to_string)
        .unwrap_or(0))
}

/// Checks `mode` against `addrs`, `master_name` and the Redis URL (`url`,
/// already resolved), and says which servers to reach.
pub(super) fn mode(s: &Sources, url: &str) -> Result<Topology, SettingsError> {
    let config = &s.config;
    let refuse = |field: &str, detail: &str, fix: &str| Err(s.error(field, detail.into(), fix));
    let addrs: Vec<String> = (config.addrs.iter().flatten())
        .filter(|a| !a.is_empty())
        .cloned()
        .collect();
    match (
        set(&config.mode).unwrap_or("standalone"),
        set(&config.master_name),
    ) {
        ("standalone", _) if !addrs.is_empty() => refuse(
            "addrs",
            "is set in standalone mode",
            "remove addrs (it lists cluster seeds or sentinels), or set mode",
        ),
        ("standalone", Some(_)) => refuse(
            "master_name",
            "is set in standalone mode",
            "remove master_name (it is for sentinel mode), or set mode to \"sentinel\"",
        ),
        ("standalone", None) => Ok(Topology::Standalone),
        ("cluster", Some(_)) => refuse(
            "master_name",
            "is set in cluster mode",
            "remove master_name (it is for sentinel mode)",
        ),
        ("cluster", None) => match url_db(url).filter(|db| *db != 0) {
            Some(db) => refuse(
                "url",
                &format!("selects db {db}, and Redis Cluster has only db 0"),
                "drop the /db part of the URL (or make it /0)",
            ),
            None => check_cluster_names(s).map(|()| Topology::Cluster { seeds: addrs }),
        },
        ("sentinel", None) => refuse(
            "master_name",
            "is missing: sentinel mode needs the monitored master's name",
            "set master_name, e.g. \"mymaster\"",
        ),
        ("sentinel", Some(name)) => Ok(Topology::Sentinel {
            sentinels: addrs,
            master_name: name.to_owned(),
        }),
        (other, _) => refuse(
            "mode",
            &format!("{other:?} is not a mode"),
            "set it to \"standalone\" (or \"\"), \"cluster\" or \"sentinel\"",
        ),
    }
}

/// The db index a `redis://host/N` URL selects; `None` when it selects none
/// (or the URL cannot say, such as a unix socket path).
fn url_db(url: &str) -> Option<u64> {
    let parsed = Url::parse(url).ok()?;
    let redis = matches!(parsed.scheme(), "redis" | "rediss");
    // No db part, or one that is not a number (the Redis client's error to report).
    (parsed.path().trim_matches('/').parse().ok()).filter(|_| redis)
}

/// In cluster mode a queue's bookkeeping keys must hash to its pending
/// key's slot; a name holding `}` or an empty `{}` without a hash tag of
/// its own cannot (Go has the same limit). Refused here, naming the queue,
/// rather than by the store's slot check on the first claim. The same for
/// a configured result list whose markers could not share its slot.
fn check_cluster_names(s: &Sources) -> Result<(), SettingsError> {
    let keys = claim_redis::keys::Keys::with_layout("", "", claim_redis::KeyLayout::HashTagged);
    let queues = || s.config.queues.iter().flatten().enumerate();
    for (i, queue) in queues() {
        if let Some(why) = set(&queue.queue_name).and_then(|name| keys.queue_refusal(name)) {
            let fix = "rename the queue, or give it a hash tag of its own";
            return Err(s.error(format!("queues[{i}].queue_name"), why, fix));
        }
    }
    // A result list's terminal markers must share its slot: every name can
    // (claim_redis::slots::carried_tag), checked by the store's own rule
    // so a list that could not is named here, not on its first record.
    let lists = queues().map(|(i, q)| {
        (
            format!("queues[{i}].result_queue_name"),
            &q.result_queue_name,
        )
    });
    let top = ("result_queue_name".to_owned(), &s.config.result_queue_name);
    for (field, list) in std::iter::once(top).chain(lists) {
        if let Some(why) = set(list).and_then(|l| keys.list_refusal(l)) {
            return Err(s.error(field, why, "rename the result list"));
        }
    }
    Ok(())
}
