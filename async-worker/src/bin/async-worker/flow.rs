//! What the flow-control settings become at start: each queue's and pool's gate, built by the gate factory with Go's startup errors, and the gateway client with the merge policy's stamps and the transforms.

use std::sync::Arc;

use async_worker::gate::{DispatchGate, GateEnv, GateOwner, GateParams, factory};
use async_worker::http_handler::HttpHandler;
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

/// Gives `builder` every queue gate and pool gate the settings name, and
/// the tier-priority order when the merge policy asks for it. The first
/// gate that cannot be built stops the start, as Go's does.
pub fn with_flow(
    mut builder: RuntimeBuilder,
    settings: &ProcessorSettings,
    env: &GateEnv,
) -> Result<RuntimeBuilder, String> {
    if let Some(MergePolicy::TierPriority(tiers)) = &settings.flow.merge_policy {
        builder = builder.tier_priority(tiers.tier_label.clone());
    }
    for queue in &settings.queues {
        let owner = GateOwner::queue(&queue.id, &queue.queue_name, &queue.worker_pool_id);
        let what = format!("queue {:?}", queue.id);
        if let Some(gate) = gate_of(&what, &queue.gate_type, &queue.gate_params, &owner, env)? {
            builder = builder.queue_gate(queue.id.clone(), gate);
        }
    }
    for pool in &settings.flow.pools {
        let owner = GateOwner::pool(&pool.id);
        let what = format!("pool {:?}", pool.id);
        if let Some(gate) = gate_of(&what, &pool.gate_type, &pool.gate_params, &owner, env)? {
            builder = builder.pool_gate(pool.id.clone(), gate);
        }
    }
    Ok(builder)
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
/// (fairness on by default) and the transforms.
pub fn handler(settings: &ProcessorSettings) -> Result<Arc<HttpHandler>, String> {
    let mut handler = HttpHandler::new(settings.targets()).map_err(|e| e.to_string())?;
    if let Some(policy) = &settings.flow.merge_policy {
        handler = handler.with_policy(policy)?;
    }
    let handler = handler.with_transforms(settings.flow.transforms.clone());
    Ok(Arc::new(handler))
}
