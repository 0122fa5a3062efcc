//! What the flow-control settings become at start: each queue's and pool's gate, built by the gate factory with Go's startup errors, and the gateway client with the merge policy's stamps and the transforms.

use std::sync::Arc;

use async_worker::gate::{GateEnv, GateOwner, factory};
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
        let gate = factory::build(&queue.gate_type, &queue.gate_params, &owner, env);
        let gate = gate.map_err(|e| {
            format!(
                "failed to create gate for queue {:?} (gate_type={:?}): {e}",
                queue.id, queue.gate_type
            )
        })?;
        if let Some(gate) = gate {
            tracing::info!(queue = %queue.id, gate_type = %queue.gate_type, "queue gate");
            builder = builder.queue_gate(queue.id.clone(), gate);
        }
    }
    for pool in &settings.flow.pools {
        let owner = GateOwner::pool(&pool.id);
        let gate = factory::build(&pool.gate_type, &pool.gate_params, &owner, env);
        let gate = gate.map_err(|e| {
            format!(
                "failed to create gate for pool {:?} (gate_type={:?}): {e}",
                pool.id, pool.gate_type
            )
        })?;
        if let Some(gate) = gate {
            tracing::info!(pool = %pool.id, gate_type = %pool.gate_type, "pool gate");
            builder = builder.pool_gate(pool.id.clone(), gate);
        }
    }
    Ok(builder)
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
