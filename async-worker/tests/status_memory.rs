//! The `/status` snapshot of a running runtime over the memory store (no browser, paused time): counts, the replica's own claims and in-flight count, dead reasons, no payload, and a snapshot that writes nothing.

#[path = "common/faulty.rs"]
mod faulty;
#[path = "common/memory_rig.rs"]
mod rig;

use async_worker::status::{StatusSource, html};
use claim_core::store::Submission;
use claim_core::wire::Envelope;
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, Generation};
use rig::*;
use std::time::Duration;

const SECRET: &str = "PAYLOAD-SECRET-in-memory";
/// The runtime's concurrency in the rig.
const WORKERS: usize = 8;

/// Submits `id` to [`A`] with the secret as its payload, created a minute
/// before [`START`].
async fn submit_secret(s: &Setup, id: &str) {
    let deadline = (START.0 / 1000) as i64 + 3600;
    let payload = serde_json::json!({"prompt": SECRET});
    let mut envelope = Envelope::new(id, format!("tok-{id}"), deadline, payload);
    envelope.data.created = (START.0 / 1000) as i64 - 60;
    s.memory.submit(A, &envelope.submission()).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_snapshot_shows_the_runtimes_claims_pending_and_dead_entries_and_no_payload() {
    let s = setup();
    // Slow requests: every worker holds one, the rest stay pending.
    for i in 0..WORKERS + 3 {
        submit_secret(&s, &format!("slow-{i:02}")).await;
    }
    // A member that is no envelope, pending, then dead-lettered.
    let member: claim_core::Member =
        format!("{{\"not\": \"an envelope\", \"secret\": \"{SECRET}\"}}")
            .into_bytes()
            .into();
    let submission = Submission {
        member: member.clone(),
        generation: Generation::new("bad", "tok-bad"),
        deadline: (START.0 / 1000) as i64,
        payload: None,
    };
    s.memory.submit(A, &submission).await.unwrap();
    let moved = s
        .memory
        .dead_letter(A, &member, "member has no data.id")
        .await;
    assert_eq!(moved, Ok(true));
    let rt = runtime(&s, &[A]);
    let source = StatusSource::of(&rt);
    let owner = rt.owner().as_str().to_owned();
    let (token, handle) = start(rt);
    within(Duration::from_secs(5), "every worker busy", async || {
        s.memory.depths(A).await.unwrap().claimed == WORKERS
    })
    .await;

    let snapshot = source.snapshot().await;
    assert_eq!(snapshot.replica.owner, owner);
    assert_eq!(snapshot.replica.in_flight, WORKERS);
    let view = snapshot.store.as_ref().expect("the store was read");
    let queue = &view.queues[0];
    assert_eq!(
        (queue.queue.as_str(), queue.pending, queue.claimed),
        (A, 3, WORKERS)
    );
    assert_eq!(queue.dead, 1);
    assert_eq!(view.claims.len(), WORKERS);
    assert!(view.claims.iter().all(|c| c.owner == owner), "{view:?}");
    assert_eq!(view.dead[0].reason, "member has no data.id");

    let page = html::render(&snapshot);
    assert_eq!(page.matches("(this replica)").count(), WORKERS, "{page}");
    assert!(page.contains("member has no data.id"), "{page}");
    assert!(page.contains(&format!("<dd id=\"in-flight\">{WORKERS}</dd>")));
    assert!(
        !page.contains(SECRET),
        "a payload reached the page:\n{page}"
    );

    // Reading changed nothing.
    let depths = s.memory.depths(A).await.unwrap();
    assert_eq!(
        (depths.pending, depths.claimed, depths.dead),
        (3, WORKERS, 1)
    );
    assert!(s.memory.now().await.is_ok());
    stop_within_bound(token, handle).await;
}
