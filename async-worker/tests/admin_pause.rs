//! Pausing a queue on the memory store under tokio's paused time: every replica stops claiming within one poll interval, in-flight work finishes, a resume restarts claiming.

#[path = "common/faulty.rs"]
mod faulty;
#[path = "common/memory_rig.rs"]
mod rig;

use claim_core::{ClaimAdmin, ClaimInspect};
use rig::{A, B, RESULTS, answered, setup, start, stop_within_bound, submit_numbered, within};
use std::time::Duration;

/// The rig's poll interval.
const POLL: Duration = Duration::from_millis(100);

#[tokio::test(start_paused = true)]
async fn a_paused_queue_is_left_alone_by_every_replica_while_its_in_flight_work_finishes_and_a_resume_restarts_it()
 {
    let s = setup();
    let replicas = [
        start(rig::runtime(&s, &[A, B])),
        start(rig::runtime(&s, &[A, B])),
    ];
    submit_numbered(&s, A, "slow", 4).await;
    within(Duration::from_secs(5), "slow claims", async || {
        s.memory.depths(A).await.unwrap().claimed == 4
    })
    .await;

    assert!(s.memory.set_paused(A, true).await.unwrap());
    // Within one poll interval every replica has read the flag.
    tokio::time::sleep(POLL + Duration::from_millis(1)).await;
    submit_numbered(&s, A, "ok", 5).await;
    submit_numbered(&s, B, "other", 3).await;
    // The slow requests (20 s) finish and ack while the queue is paused;
    // queue B runs on.
    within(Duration::from_secs(30), "in-flight records", async || {
        answered(&s, RESULTS).await.len() == 7
    })
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let depths = s.memory.depths(A).await.unwrap();
    assert_eq!((depths.pending, depths.claimed), (5, 0), "{depths:?}");
    assert!(
        answered(&s, RESULTS)
            .await
            .iter()
            .all(|id| !id.starts_with("ok")),
        "nothing claimed from a paused queue"
    );

    assert!(s.memory.set_paused(A, false).await.unwrap());
    // Within one poll interval a replica claims again; the answers follow.
    within(POLL * 2, "claims after the resume", async || {
        s.memory.depths(A).await.unwrap().pending == 0
    })
    .await;
    within(Duration::from_secs(5), "every record", async || {
        answered(&s, RESULTS).await.len() == 12
    })
    .await;
    let ids = answered(&s, RESULTS).await;
    let mut unique = ids.clone();
    unique.dedup();
    assert_eq!(ids, unique, "one record each");
    for (token, handle) in replicas {
        stop_within_bound(token, handle).await;
    }
}
