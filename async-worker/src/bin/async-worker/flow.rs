//! What the flow-control settings become at start: each queue's and pool's gate, built by the gate factory with Go's startup errors, and the gateway client with the merge policy's stamps, the transforms, and the feedback that tells a request's gates what each gateway call showed.

use std::collections::HashMap;
use std::sync::Arc;

use async_worker::gate::{DispatchGate, GateEnv, GateOwner, GateParams, factory};
use async_worker::http_handler::{Feedback, HttpHandler};
use async_worker::merge_policy::MergePolicy;
use async_worker::runtime::RuntimeBuilder;

use crate::settings::ProcessorSettings;

/// The process-wide settings the gates' metric sources read.
pub fn gate_env(settings: &ProcessorSettings) -> GateEnv {
    GateEnv {
        prometheus_url: settings.flow.prometheus_url.clone(),
        prometheus_cache_ttl: settings.flow.prometheus_cache_ttl,
        ..GateEnv::default()
    }
}

/// Every queue gate and pool gate the settings name, built once: the
/// runtime runs them and the gateway client reports to them.
#[derive(Debug, Default)]
pub struct FlowGates {
    /// By queue id.
    queues: HashMap<String, Arc<dyn DispatchGate>>,
    /// By pool id.
    pools: HashMap<String, Arc<dyn DispatchGate>>,
}

impl FlowGates {
    /// Builds each gate; the first that cannot be built stops the start
    /// with Go's error.
    pub fn build(settings: &ProcessorSettings, env: &GateEnv) -> Result<FlowGates, String> {
        let mut gates = FlowGates::default();
        for queue in &settings.queues {
            let owner = GateOwner::queue(&queue.id, &queue.queue_name, &queue.worker_pool_id);
            let what = format!("queue {:?}", queue.id);
            if let Some(gate) = gate_of(&what, &queue.gate_type, &queue.gate_params, &owner, env)? {
                gates.queues.insert(queue.id.clone(), gate);
            }
        }
        for pool in &settings.flow.pools {
            let owner = GateOwner::pool(&pool.id);
            let what = format!("pool {:?}", pool.id);
            if let Some(gate) = gate_of(&what, &pool.gate_type, &pool.gate_params, &owner, env)? {
                gates.pools.insert(pool.id.clone(), gate);
            }
        }
        Ok(gates)
    }

    /// The gate of pool `id`, when it has one.
    #[cfg(test)]
    pub fn pool(&self, id: &str) -> Option<Arc<dyn DispatchGate>> {
        self.pools.get(id).cloned()
    }

    /// Tells each call's pool gate (the request's queue's `worker_pool_id`)
    /// and queue gate what the call showed; `None` when no queue has
    /// either. Gates that learn nothing from answers ignore it.
    pub fn feedback(&self, settings: &ProcessorSettings) -> Option<Feedback> {
        let routes: HashMap<String, Vec<Arc<dyn DispatchGate>>> = (settings.queues.iter())
            .map(|queue| {
                let pool = self.pools.get(&queue.worker_pool_id);
                let gates = pool.into_iter().chain(self.queues.get(&queue.id));
                (queue.id.clone(), gates.cloned().collect::<Vec<_>>())
            })
            .filter(|(_, gates)| !gates.is_empty())
            .collect();
        if routes.is_empty() {
            return None;
        }
        Some(Arc::new(move |request, outcome| {
            for gate in routes.get(&request.queue_id).into_iter().flatten() {
                gate.observe(&request.parsed.labels, outcome);
            }
        }))
    }
}

/// Gives `builder` every queue gate and pool gate, and the tier-priority
/// order when the merge policy asks for it.
pub fn with_flow(
    mut builder: RuntimeBuilder,
    settings: &ProcessorSettings,
    gates: &FlowGates,
) -> RuntimeBuilder {
    if let Some(MergePolicy::TierPriority(tiers)) = &settings.flow.merge_policy {
        builder = builder.tier_priority(tiers.tier_label.clone());
    }
    for (queue, gate) in &gates.queues {
        builder = builder.queue_gate(queue.clone(), gate.clone());
    }
    for (pool, gate) in &gates.pools {
        builder = builder.pool_gate(pool.clone(), gate.clone());
    }
    builder
}

/// The gate `what` (a queue or pool) asks for, with Go's start error.
fn gate_of(
    what: &str,
    gate_type: &str,
    params: &GateParams,
    owner: &GateOwner,
    env: &GateEnv,
) -> Result<Option<Arc<dyn DispatchGate>>, String> {
    let gate = factory::build(gate_type, params, owner, env)
        .map_err(|e| format!("failed to create gate for {what} (gate_type={gate_type:?}): {e}"))?;
    if gate.is_some() {
        tracing::info!(%what, %gate_type, "gate");
    }
    Ok(gate)
}

/// The gateway client: each queue's target, the merge policy's headers
/// (fairness on by default), the transforms, and the gates' feedback.
pub fn handler(
    settings: &ProcessorSettings,
    gates: &FlowGates,
) -> Result<Arc<HttpHandler>, String> {
    let mut handler = HttpHandler::new(settings.targets()).map_err(|e| e.to_string())?;
    if let Some(policy) = &settings.flow.merge_policy {
        handler = handler.with_policy(policy)?;
    }
    if let Some(feedback) = gates.feedback(settings) {
        handler = handler.with_feedback(feedback);
    }
    let handler = handler.with_transforms(settings.flow.transforms.clone());
    Ok(Arc::new(handler))
}
