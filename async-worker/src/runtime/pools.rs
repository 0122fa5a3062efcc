//! The runtime's worker pools and gates: each pool's worker permits and pool gate, each queue's gate, found by pool name and queue id.
//!
//! Built once from the checked config: a pool per [`PoolSpec`] (or the
//! implicit `default`), a queue gate per queue id the builder was given one
//! for. A consumer takes its queue's gate and its pool when it starts.

use super::tiers::TierOrder;
use crate::config::{BuildError, RuntimeConfig};
use crate::gate::DispatchGate;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// One worker pool: its workers as permits, and the gate its workers run.
#[derive(Debug)]
pub(crate) struct Pool {
    pub name: Arc<str>,
    pub permits: Arc<Semaphore>,
    pub gate: Option<Arc<dyn DispatchGate>>,
    /// Tier-priority ordering of its queues' claims, when configured.
    pub tiers: Option<Arc<TierOrder>>,
}

/// Every pool and queue gate of a runtime.
#[derive(Debug, Default)]
pub(crate) struct Pools {
    pools: HashMap<String, Arc<Pool>>,
    queue_gates: HashMap<String, Arc<dyn DispatchGate>>,
}

/// The gates a builder was given: for every queue, per queue id, per pool.
#[derive(Debug, Default)]
pub(crate) struct GateSet {
    pub every_queue: Option<Arc<dyn DispatchGate>>,
    pub queues: HashMap<String, Arc<dyn DispatchGate>>,
    pub pools: HashMap<String, Arc<dyn DispatchGate>>,
}

impl Pools {
    /// The pools of `config` (already validated) with `gates`; a gate for a
    /// queue id or pool the config does not have is refused.
    pub fn new(config: &RuntimeConfig, mut gates: GateSet) -> Result<Pools, BuildError> {
        let mut pools = HashMap::new();
        for spec in config.worker_pools() {
            let pool = Pool {
                name: spec.name.as_str().into(),
                permits: Arc::new(Semaphore::new(spec.workers)),
                gate: gates.pools.remove(&spec.name),
                tiers: config.tier_label.as_ref().map(|_| Arc::default()),
            };
            pools.insert(spec.name, Arc::new(pool));
        }
        if let Some(name) = gates.pools.into_keys().next() {
            return Err(BuildError::GateForNothing { kind: "pool", name });
        }
        let mut queue_gates = HashMap::new();
        for spec in &config.queues {
            let gate = gates.queues.remove(&spec.id).or(gates.every_queue.clone());
            if let Some(gate) = gate {
                queue_gates.insert(spec.id.clone(), gate);
            }
        }
        if let Some(name) = gates.queues.into_keys().next() {
            return Err(BuildError::GateForNothing {
                kind: "queue",
                name,
            });
        }
        Ok(Pools { pools, queue_gates })
    }

    /// The pool a queue's requests run in (validation made sure it exists).
    pub fn pool(&self, name: &str) -> Arc<Pool> {
        match self.pools.get(name) {
            Some(pool) => pool.clone(),
            None => unreachable!("RuntimeConfig::validate checked pool {name:?} exists"),
        }
    }

    /// The gate of the queue with this id, when it has one.
    pub fn queue_gate(&self, queue_id: &str) -> Option<Arc<dyn DispatchGate>> {
        self.queue_gates.get(queue_id).cloned()
    }

    /// Every pool (for shutdown's and the status page's view).
    pub fn all(&self) -> impl Iterator<Item = &Arc<Pool>> {
        self.pools.values()
    }
}
