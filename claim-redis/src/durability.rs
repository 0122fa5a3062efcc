//! The durability check the worker runs at start: AOF, fsync policy, eviction policy, replicas.

use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::Op;
use claim_core::StoreError;
use std::collections::HashMap;

/// What Redis says about the settings the durability contract needs.
/// `None` where a setting could not be read (CONFIG renamed or not permitted).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DurabilityReport {
    pub appendonly: Option<String>,
    pub appendfsync: Option<String>,
    pub maxmemory_policy: Option<String>,
    /// Replicas connected to this server (INFO replication).
    pub connected_replicas: Option<u32>,
    /// Why CONFIG GET failed, when it did.
    pub config_error: Option<String>,
}

impl DurabilityReport {
    /// What is missing from the contract (AOF with everysec/always and/or
    /// replication; `maxmemory-policy noeviction`), one sentence each with
    /// the fix. Empty when the contract holds.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(e) = &self.config_error {
            out.push(format!(
                "cannot read the Redis configuration ({e}); check by hand that appendonly is yes and maxmemory-policy is noeviction"
            ));
        }
        let replicas = self.connected_replicas.unwrap_or(0);
        match self.appendonly.as_deref() {
            Some("no") if replicas == 0 => out.push(
                "Redis persistence is off (appendonly no, no replicas): a Redis restart loses queued requests, claims and markers; set appendonly yes with appendfsync everysec or always".into(),
            ),
            Some("yes") if self.appendfsync.as_deref() == Some("no") => out.push(
                "appendfsync is no: the OS decides when the AOF reaches disk and a crash may lose acknowledged writes; set appendfsync everysec or always".into(),
            ),
            _ => {}
        }
        if let Some(policy) = self
            .maxmemory_policy
            .as_deref()
            .filter(|p| *p != "noeviction")
        {
            out.push(format!(
                "maxmemory-policy is {policy}: under memory pressure Redis may evict claims, markers or queued requests; set maxmemory-policy noeviction"
            ));
        }
        out
    }
}

impl RedisStore {
    /// Reads the durability settings. CONFIG being disabled is reported in
    /// the result, not as an error; an unreachable Redis is an error.
    pub async fn check_durability(&self) -> Result<DurabilityReport, StoreError> {
        const OP: Op = Op::CheckDurability;
        let mut report = DurabilityReport::default();
        for (name, slot) in [
            ("appendonly", &mut report.appendonly),
            ("appendfsync", &mut report.appendfsync),
            ("maxmemory-policy", &mut report.maxmemory_policy),
        ] {
            let cmd = redis::cmd("CONFIG").arg("GET").arg(name).to_owned();
            match self
                .conn()
                .query_or_refusal::<HashMap<String, String>>(OP, &cmd)
                .await?
            {
                Ok(mut values) => *slot = values.remove(name),
                Err(refusal) => {
                    report.config_error = Some(refusal);
                    break;
                }
            }
        }
        let info: redis::Value = self
            .conn()
            .query(OP, Effect::Read, redis::cmd("INFO").arg("replication"))
            .await?;
        report.connected_replicas = fewest_replicas(info);
        Ok(report)
    }
}

/// `connected_slaves` from `INFO replication`: one server's text, or (a
/// cluster client asks every node) a map of node to text, where the
/// primary with the fewest replicas is the one whose writes are least safe.
fn fewest_replicas(info: redis::Value) -> Option<u32> {
    let replicas = |text: &str| -> Option<u32> {
        text.lines()
            .find_map(|l| l.strip_prefix("connected_slaves:"))
            .and_then(|n| n.trim().parse().ok())
    };
    match info {
        redis::Value::Map(nodes) => nodes
            .into_iter()
            .filter_map(|(_, text)| redis::from_redis_value::<String>(text).ok())
            .filter(|text| text.lines().any(|l| l.trim() == "role:master"))
            .filter_map(|text| replicas(&text))
            .min(),
        one => replicas(&redis::from_redis_value::<String>(one).ok()?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clusters_info_per_node_reports_the_primary_with_the_fewest_replicas() {
        let text = |role: &str, n: u32| {
            redis::Value::BulkString(
                format!("# Replication\r\nrole:{role}\r\nconnected_slaves:{n}\r\n").into_bytes(),
            )
        };
        let node = |addr: &str| redis::Value::BulkString(addr.as_bytes().to_vec());
        let cluster = redis::Value::Map(vec![
            (node("127.0.0.1:1"), text("master", 2)),
            (node("127.0.0.1:2"), text("master", 1)),
            (node("127.0.0.1:3"), text("slave", 0)),
        ]);
        assert_eq!(fewest_replicas(cluster), Some(1));
        assert_eq!(fewest_replicas(text("master", 3)), Some(3));
    }

    fn report(aof: &str, fsync: &str, policy: &str, replicas: u32) -> DurabilityReport {
        DurabilityReport {
            appendonly: Some(aof.into()),
            appendfsync: Some(fsync.into()),
            maxmemory_policy: Some(policy.into()),
            connected_replicas: Some(replicas),
            config_error: None,
        }
    }

    #[test]
    fn aof_with_everysec_and_noeviction_has_no_problems() {
        assert!(
            report("yes", "everysec", "noeviction", 0)
                .problems()
                .is_empty()
        );
        assert!(
            report("no", "everysec", "noeviction", 2)
                .problems()
                .is_empty(),
            "replication counts"
        );
    }

    #[test]
    fn missing_persistence_and_eviction_are_each_named_with_the_fix() {
        let p = report("no", "everysec", "allkeys-lru", 0).problems();
        assert_eq!(p.len(), 2);
        assert!(p[0].contains("appendonly yes"));
        assert!(p[1].contains("noeviction"));
        assert!(report("yes", "no", "noeviction", 0).problems()[0].contains("appendfsync"));
    }

    #[test]
    fn an_unreadable_config_is_a_problem_not_an_error() {
        let r = DurabilityReport {
            config_error: Some("unknown command CONFIG".into()),
            ..DurabilityReport::default()
        };
        assert!(r.problems()[0].contains("check by hand"));
    }
}
