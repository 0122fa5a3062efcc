//! How the processor reaches Redis: the transport config's `mode`, `addrs` and `master_name` (Go's rules and messages) mapped onto the store's [`Topology`], and our own TLS files and `replica_acks` (flags and config fields).
//!
//! Go accepts `""`/`standalone`, `cluster` and `sentinel`; the checks run in
//! Go's order and name the field. The URL stays the first node (cluster) or
//! the first sentinel, and carries credentials, `rediss://` and the db.
//! TLS files and `replica_acks` are ours (Go has neither): flags
//! `--redis-tls-ca-file`, `--redis-tls-cert-file`, `--redis-tls-key-file`,
//! `--replica-acks`, and config fields `redis_tls_ca_file`,
//! `redis_tls_cert_file`, `redis_tls_key_file`, `replica_acks`; as for every
//! setting of ours, the config wins over the flag (or its env), with a note.

use std::path::PathBuf;

use claim_redis::Topology;
use reqwest::Url;

use super::RunArgs;
use super::error::SettingsError;
use super::precedence::{Sources, ours};
use super::transport::{TransportConfig, count, positive, set};

/// The modes Go knows, as written in the config.
const MODES: &str = "\"standalone\" (or \"\"), \"cluster\" or \"sentinel\"";

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

/// Checks `mode` against `addrs`, `master_name` and the Redis URL (`url`,
/// already resolved), and says which servers to reach.
pub(super) fn check_mode(
    config: &TransportConfig,
    origin: &str,
    url: &str,
) -> Result<Topology, SettingsError> {
    let error = |field: &str, detail: String, fix: &str| SettingsError::ConfigValue {
        origin: origin.to_owned(),
        field: field.to_owned(),
        detail,
        fix: fix.to_owned(),
    };
    let addrs: Vec<String> = config
        .addrs
        .iter()
        .flatten()
        .filter(|a| !a.is_empty())
        .cloned()
        .collect();
    let master = set(&config.master_name);
    let mode = set(&config.mode).unwrap_or("standalone");
    match mode {
        "standalone" => {
            if !addrs.is_empty() {
                return Err(error(
                    "addrs",
                    "is set in standalone mode".into(),
                    "remove addrs (it lists cluster seeds or sentinels), or set mode",
                ));
            }
            if master.is_some() {
                return Err(error(
                    "master_name",
                    "is set in standalone mode".into(),
                    "remove master_name (it is for sentinel mode), or set mode to \"sentinel\"",
                ));
            }
            Ok(Topology::Standalone)
        }
        "cluster" => {
            if master.is_some() {
                return Err(error(
                    "master_name",
                    "is set in cluster mode".into(),
                    "remove master_name (it is for sentinel mode)",
                ));
            }
            if let Some(db) = url_db(url).filter(|db| *db != 0) {
                return Err(error(
                    "url",
                    format!("selects db {db}, and Redis Cluster has only db 0"),
                    "drop the /db part of the URL (or make it /0)",
                ));
            }
            check_cluster_queue_names(config, origin)?;
            Ok(Topology::Cluster { seeds: addrs })
        }
        "sentinel" => match master {
            None => Err(error(
                "master_name",
                "is missing: sentinel mode needs the monitored master's name".into(),
                "set master_name, e.g. \"mymaster\"",
            )),
            Some(name) => Ok(Topology::Sentinel {
                sentinels: addrs,
                master_name: name.to_owned(),
            }),
        },
        other => Err(error(
            "mode",
            format!("{other:?} is not a mode"),
            &format!("set it to {MODES}"),
        )),
    }
}

/// The TLS files and `replica_acks`, flag (or env) over config; refuses
/// TLS files with a plain `redis://` URL and a certificate without its key.
pub(super) fn connection_extras(
    config: &TransportConfig,
    args: &RunArgs,
    origin: &str,
    url: &str,
    notes: &mut Vec<String>,
) -> Result<(RedisTls, u32), SettingsError> {
    let mut sources = Sources { origin, notes };
    let mut path = |flag: &str, configured: &Option<String>, given: &Option<PathBuf>| {
        let configured = set(configured).map(PathBuf::from);
        sources.pick(ours(flag), given.clone(), configured, |p| {
            p.display().to_string()
        })
    };
    let tls = RedisTls {
        ca_file: path(
            "redis-tls-ca-file",
            &config.redis_tls_ca_file,
            &args.redis_tls_ca_file,
        ),
        cert_file: path(
            "redis-tls-cert-file",
            &config.redis_tls_cert_file,
            &args.redis_tls_cert_file,
        ),
        key_file: path(
            "redis-tls-key-file",
            &config.redis_tls_key_file,
            &args.redis_tls_key_file,
        ),
    };
    let configured = count(
        positive(config.replica_acks, origin, "replica_acks")?,
        origin,
        "replica_acks",
        "give the number of replicas to wait for, e.g. 1",
    )?;
    let replica_acks = sources
        .pick_shown(ours("replica-acks"), args.replica_acks, configured)
        .unwrap_or(0);
    if tls != RedisTls::default() && !url.starts_with("rediss://") {
        return Err(SettingsError::invalid(
            "--redis-tls-ca-file / --redis-tls-cert-file / --redis-tls-key-file (config: redis_tls_*)",
            "TLS files are given but the Redis URL is not rediss://",
            "use a rediss:// URL to connect with TLS, or drop the TLS files",
        ));
    }
    if tls.cert_file.is_some() != tls.key_file.is_some() {
        return Err(SettingsError::invalid(
            "--redis-tls-cert-file / --redis-tls-key-file (config: redis_tls_cert_file / redis_tls_key_file)",
            "only one of the client certificate and its key is given",
            "give both files, or neither",
        ));
    }
    Ok((tls, replica_acks))
}

/// The db index a `redis://host/N` URL selects; `None` when it selects none
/// (or the URL cannot say, such as a unix socket path).
fn url_db(url: &str) -> Option<u64> {
    let parsed = Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "redis" | "rediss") {
        return None;
    }
    let path = parsed.path().trim_matches('/');
    if path.is_empty() {
        return None;
    }
    // A db part that is not a number is the Redis client's error to report.
    path.parse().ok()
}

/// In cluster mode a queue's bookkeeping keys must hash to its pending
/// key's slot; a name holding `}` or an empty `{}` without a hash tag of
/// its own cannot (Go has the same limit). Refused here, naming the queue,
/// rather than by the store's slot check on the first claim. The same for
/// a configured result list whose markers could not share its slot.
fn check_cluster_queue_names(config: &TransportConfig, origin: &str) -> Result<(), SettingsError> {
    let keys = claim_redis::keys::Keys::with_layout("", "", claim_redis::KeyLayout::HashTagged);
    for (i, queue) in config.queues.iter().flatten().enumerate() {
        let Some(name) = set(&queue.queue_name) else {
            continue;
        };
        if let Some(why) = keys.queue_refusal(name) {
            return Err(SettingsError::ConfigValue {
                origin: origin.to_owned(),
                field: format!("queues[{i}].queue_name"),
                detail: why,
                fix: "rename the queue, or give it a hash tag of its own".to_owned(),
            });
        }
    }
    // A result list's terminal markers must share its slot: every name can
    // (claim_redis::slots::carried_tag), checked by the store's own rule
    // so a list that could not is named here, not on its first record.
    let lists = config.queues.iter().flatten().enumerate().map(|(i, q)| {
        (
            format!("queues[{i}].result_queue_name"),
            &q.result_queue_name,
        )
    });
    for (field, list) in [("result_queue_name".to_owned(), &config.result_queue_name)]
        .into_iter()
        .chain(lists)
    {
        if let Some(why) = set(list).and_then(|l| keys.list_refusal(l)) {
            return Err(SettingsError::ConfigValue {
                origin: origin.to_owned(),
                field,
                detail: why,
                fix: "rename the result list".to_owned(),
            });
        }
    }
    Ok(())
}
