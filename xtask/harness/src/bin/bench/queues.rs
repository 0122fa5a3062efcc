//! The `queues` run: what many configured queues cost Redis while idle, and whether idle queues slow the busy ones beside them.
//!
//! Idle: the runtime (the `protected` run's settings) polls queues that
//! hold nothing, once with one queue configured (the baseline) and once
//! with `--configured-queues` (200); each time the server's CPU is read
//! over `--idle-secs` (15 s: one tick of the 15 s reclaim and backlog
//! reads, so the window holds as many as a second of running does on
//! average) after a settling second. Idle Redis CPU per idle queue per
//! second = (CPU with all configured − baseline) / (configured − 1) /
//! window. Busy: `--requests` dealt over `--busy-queues` (10) queues,
//! drained with only those configured, then with all of them.

use crate::protected::{Backend, config, counting_stores, drain, start};
use crate::report::emit_with;
use crate::server::{Delta, round};
use crate::target::Target;
use crate::{NoOp, Settings};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long the runtime runs before an idle window opens.
const SETTLE: Duration = Duration::from_secs(1);

/// What the run is told.
pub struct Shape {
    pub configured: usize,
    pub busy: usize,
    pub idle: Duration,
}

pub async fn run(name: &str, url: &str, set: &Settings, shape: &Shape) {
    assert!(
        shape.configured > 1 && (1..=shape.configured).contains(&shape.busy),
        "bench: --configured-queues {} --busy-queues {}: configure 2 or more queues and 1 to that many busy",
        shape.configured,
        shape.busy
    );
    let many = |count: usize| async move {
        Arc::new(Target::standalone(url, set).await.with_queues(
            count,
            shape.busy.min(count),
            &set.list,
        ))
    };
    let baseline = idle(set, many(1).await, shape.idle).await;
    let all = idle(set, many(shape.configured).await, shape.idle).await;
    let secs = shape.idle.as_secs_f64();
    let idle_queues = (shape.configured - 1) as f64;
    let per_queue = |all: f64, one: f64| (all - one) / idle_queues / secs;
    let extra = serde_json::json!({
        "idle_us_per_queue_s": round(per_queue(all.cpu_us, baseline.cpu_us), 2),
        "idle_calls_per_queue_s": round(per_queue(all.calls() as f64, baseline.calls() as f64), 2),
        "idle_us_s_configured": round(all.cpu_us / secs, 0),
        "idle_us_s_baseline": round(baseline.cpu_us / secs, 0),
        "configured_queues": shape.configured,
        "busy_queues": shape.busy,
    });
    let only_busy = Backend::Redis(many(shape.busy).await);
    let drained = drain(set, &only_busy, 1).await;
    let alone = serde_json::json!({ "configured_queues": shape.busy, "busy_queues": shape.busy });
    emit_with(
        &format!("{name}-{}-of-{}", shape.busy, shape.busy),
        set,
        &drained,
        &[],
        None,
        alone,
    );
    let beside_idle = Backend::Redis(many(shape.configured).await);
    let drained = drain(set, &beside_idle, 1).await;
    emit_with(
        &format!("{name}-{}-of-{}", shape.busy, shape.configured),
        set,
        &drained,
        &[],
        None,
        extra,
    );
}

/// The server's figures over `window` while a runtime polls `target`'s
/// queues, all empty.
async fn idle(set: &Settings, target: Arc<Target>, window: Duration) -> Delta {
    target.flush().await;
    let backend = Backend::Redis(target.clone());
    let store = counting_stores(&backend, 1).await.remove(0);
    let stop = CancellationToken::new();
    let run = start(
        store,
        Arc::new(NoOp),
        config(set, &backend, set.concurrency),
        &stop,
    );
    tokio::time::sleep(SETTLE).await;
    let before = target.snapshots().await;
    tokio::time::sleep(window).await;
    let after = target.snapshots().await;
    stop.cancel();
    run.await.expect("runtime");
    Target::deltas(&before, &after).remove(0)
}
