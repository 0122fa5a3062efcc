//! The `redis` gate: the budget is a number an outside controller keeps in a Redis key; requests are only refused when it is 0.
//!
//! Each [`DispatchGate::budget`] reads the key with one GET, as Go does (no
//! cache): a missing key is fully open (1), a value that does not parse
//! as a Go float is open too (a controller's typo must not stall every
//! queue), a Redis error is closed (0: without its controller the gate
//! cannot know the pool has room), and the value is clamped to [0, 1]
//! with `NaN` passed through. `apply` is the budget-only default.

use super::contract::{DispatchGate, GateConfigError, GateEnv};
use super::params::{self, Params};
use super::redis_clients::RedisClients;
use redis::AsyncCommands;

/// The key read when `budget_key` is not given.
pub const DEFAULT_BUDGET_KEY: &str = "dispatch-gate-budget";

/// `gate_type: "redis"`.
#[derive(Debug, Clone)]
pub struct RedisBudgetGate {
    clients: RedisClients,
    address: String,
    budget_key: String,
}

impl RedisBudgetGate {
    /// From `gate_params`: `address` (required, `host:port`) and
    /// `budget_key` (default `dispatch-gate-budget`).
    pub fn from_params(params: Params, env: &GateEnv) -> Result<Self, GateConfigError> {
        Ok(RedisBudgetGate {
            clients: env.redis.clone(),
            address: required_address(params)?,
            budget_key: params.text("budget_key", DEFAULT_BUDGET_KEY),
        })
    }

    async fn read(&self) -> redis::RedisResult<Option<String>> {
        let mut connection = self.clients.connection(&self.address)?;
        connection.get(&self.budget_key).await
    }
}

/// The `address` param both Redis gates require, or Go's refusal naming
/// the gate type.
pub(crate) fn required_address(params: Params) -> Result<String, GateConfigError> {
    let address = params.text("address", "");
    if address.is_empty() {
        return Err(GateConfigError(format!(
            "{} gate requires an 'address' in gate_params",
            params.gate
        )));
    }
    Ok(address)
}

/// A stored budget: Go `ParseFloat` syntax, clamped to [0, 1]; `NaN`
/// passes (both comparisons are false), an unparsable value is open.
fn budget_from(value: &str) -> f64 {
    match params::parse_go_float(value) {
        Ok(budget) if budget < 0.0 => 0.0,
        Ok(budget) if budget > 1.0 => 1.0,
        Ok(budget) => budget,
        Err(error) => {
            tracing::warn!(%error, "redis gate: the budget key does not hold a number; treating it as fully open");
            1.0
        }
    }
}

#[async_trait::async_trait]
impl DispatchGate for RedisBudgetGate {
    async fn budget(&self) -> f64 {
        match self.read().await {
            Ok(Some(value)) => budget_from(&value),
            Ok(None) => 1.0,
            Err(error) => {
                tracing::warn!(%error, address = %self.address, "redis gate: cannot read the budget; treating it as closed");
                0.0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::redis_clients::testing::{
        address, gate_params, raw_connection, redis_server,
    };
    use super::*;
    use crate::gate::contract::{GateRequest, Releases, Verdict};
    use serde_json::json;
    use std::collections::BTreeMap;

    fn gate_at(address: &str) -> RedisBudgetGate {
        let given = gate_params(json!({ "address": address, "budget_key": "budget" }));
        RedisBudgetGate::from_params(Params::new("redis", &given), &GateEnv::default()).unwrap()
    }

    async fn verdict(gate: &RedisBudgetGate) -> Verdict {
        let (metadata, mut labels) = (BTreeMap::new(), BTreeMap::new());
        let mut request = GateRequest {
            id: "r1",
            metadata: &metadata,
            labels: &mut labels,
        };
        gate.apply(&mut request, &mut Releases::new())
            .await
            .unwrap()
    }

    #[test]
    fn a_redis_gate_without_an_address_is_refused_with_go_text() {
        for params in [json!({}), json!({ "address": "" })] {
            let given = gate_params(params);
            let error =
                RedisBudgetGate::from_params(Params::new("redis", &given), &GateEnv::default());
            assert_eq!(
                error.unwrap_err().0,
                "redis gate requires an 'address' in gate_params"
            );
        }
    }

    #[test]
    fn the_budget_key_defaults_to_go_s_key() {
        let params = gate_params(json!({ "address": "127.0.0.1:1" }));
        let given = Params::new("redis", &params);
        let gate = RedisBudgetGate::from_params(given, &GateEnv::default()).unwrap();
        assert_eq!(gate.budget_key, "dispatch-gate-budget");
    }

    #[test]
    fn stored_budgets_parse_as_go_floats_and_clamp_to_the_unit_range() {
        assert_eq!(budget_from("0.5"), 0.5);
        assert_eq!(budget_from("7"), 1.0);
        assert_eq!(budget_from("-1"), 0.0);
        assert_eq!(budget_from("garbage"), 1.0);
        assert_eq!(budget_from("-inf"), 0.0);
        assert_eq!(budget_from("0x1p-2"), 0.25);
        assert!(budget_from("NaN").is_nan());
    }

    #[tokio::test]
    async fn the_budget_follows_the_key_and_refuses_only_at_zero() {
        let Some(server) = redis_server() else { return };
        let gate = gate_at(&address(&server));
        assert_eq!(gate.budget().await, 1.0, "a missing key is open");
        let mut raw = raw_connection(&server).await;
        for (stored, budget) in [("garbage", 1.0), ("0.5", 0.5), ("7", 1.0), ("-1", 0.0)] {
            let () = raw.set("budget", stored).await.unwrap();
            assert_eq!(gate.budget().await, budget, "{stored}");
        }
        assert_eq!(verdict(&gate).await, Verdict::Refuse);
        let () = raw.set("budget", "0.01").await.unwrap();
        assert_eq!(verdict(&gate).await, Verdict::Continue);
    }

    #[tokio::test]
    async fn a_redis_nobody_listens_on_closes_the_budget() {
        let port = claim_redis::testing::free_port().unwrap();
        let gate = gate_at(&format!("127.0.0.1:{port}"));
        assert_eq!(gate.budget().await, 0.0);
        assert_eq!(verdict(&gate).await, Verdict::Refuse);
    }

    #[tokio::test]
    async fn a_redis_that_goes_down_closes_the_budget() {
        let Some(mut server) = redis_server() else {
            return;
        };
        let gate = gate_at(&address(&server));
        assert_eq!(gate.budget().await, 1.0);
        server.kill();
        assert_eq!(gate.budget().await, 0.0);
        assert_eq!(verdict(&gate).await, Verdict::Refuse);
    }
}
