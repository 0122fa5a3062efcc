//! `gate_decisions_total` as Go counts it: a closed gate counts `gate_closed` only while requests wait, a gate that cannot decide a member counts `error` and leaves it pending, and every reason exists at 0.
//!
//! One test per binary: it installs the process-wide Prometheus recorder.

#[path = "common/faulty.rs"]
mod faulty;
#[path = "common/memory_rig.rs"]
mod rig;

use async_trait::async_trait;
use async_worker::gate::{GateError, GateRequest, Releases, Verdict};
use async_worker::metrics as m;
use async_worker::{DispatchGate, QueueSpec, Runtime, RuntimeConfig};
use rig::*;
use std::sync::Arc;
use std::time::Duration;

const HELD_BACK: &str = "held-back";
const IDLE: &str = "idle";
const BROKEN: &str = "broken";

/// Closed (budget 0) for `held-back` and `idle`; open but unable to decide
/// any member for `broken`, whose metric source is down.
#[derive(Debug)]
struct TestGate {
    broken: bool,
}

#[async_trait]
impl DispatchGate for TestGate {
    async fn budget(&self) -> f64 {
        if self.broken { 1.0 } else { 0.0 }
    }

    async fn apply(
        &self,
        _request: &mut GateRequest<'_>,
        _releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        if self.broken {
            Err(GateError::Failed("the gate's metric source is down".into()))
        } else {
            Ok(Verdict::Refuse)
        }
    }
}

/// The value of `gate_decisions_total` for `queue` and `reason`.
fn decisions(page: &str, queue: &str, reason: &str) -> Option<f64> {
    let labels = format!(
        r#"{{queue_id="{queue}",queue_name="{queue}",pool_name="default",reason="{reason}"}}"#
    );
    let prefix = format!("{}{labels} ", m::GATE_DECISIONS);
    page.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.parse().ok())
}

#[tokio::test(start_paused = true)]
async fn a_closed_gate_counts_gate_closed_only_while_requests_wait_and_a_failing_gate_counts_error()
{
    let recorder = async_worker::serve::install_recorder().expect("install the recorder");
    let s = setup();
    submit(&s, HELD_BACK, "waiting-1", RESULTS).await;
    submit(&s, BROKEN, "waiting-2", RESULTS).await;
    let config = RuntimeConfig {
        queues: [HELD_BACK, IDLE, BROKEN].map(QueueSpec::new).to_vec(),
        poll_interval: Duration::from_millis(100),
        ..RuntimeConfig::default()
    };
    let runtime = Runtime::builder(Arc::new(s.store.clone()))
        .handler(Arc::new(Answering))
        .queue_gate(HELD_BACK, Arc::new(TestGate { broken: false }))
        .queue_gate(IDLE, Arc::new(TestGate { broken: false }))
        .queue_gate(BROKEN, Arc::new(TestGate { broken: true }))
        .config(config)
        .clock(s.clock.clone())
        .build()
        .expect("valid runtime settings");
    let page = recorder.render();
    for queue in [HELD_BACK, IDLE, BROKEN] {
        for reason in ["gate_closed", "quota_exhausted", "dropped", "error"] {
            let value = decisions(&page, queue, reason);
            assert_eq!(value, Some(0.0), "{queue} {reason} at start:\n{page}");
        }
    }
    let (token, handle) = start(runtime);
    within(
        Duration::from_secs(5),
        "three polls of each gate",
        async || {
            let page = recorder.render();
            let held_back = decisions(&page, HELD_BACK, "gate_closed").unwrap_or(0.0);
            let broken = decisions(&page, BROKEN, "error").unwrap_or(0.0);
            held_back >= 3.0 && broken >= 3.0
        },
    )
    .await;
    stop_within_bound(token, handle).await;
    let page = recorder.render();
    assert_eq!(decisions(&page, IDLE, "gate_closed"), Some(0.0), "{page}");
    assert_eq!(decisions(&page, HELD_BACK, "error"), Some(0.0), "{page}");
    assert_pending_and_unclaimed(&s, HELD_BACK, 1).await;
    assert_pending_and_unclaimed(&s, BROKEN, 1).await;
    assert!(answered(&s, RESULTS).await.is_empty(), "nothing dispatched");
}
