//! `async-worker admin pause`/`resume` and `release` against two real worker processes: claiming stops on every replica within one poll interval and restarts; a stalled worker's claim is redelivered at once, with one record in the end.
//!
//! Workers poll every second (the default `poll_interval_ms`); every wait
//! polls with a bound.

mod common;

use common::admin::admin;
use common::stage::Stage;
use common::worker::Worker;
use std::time::{Duration, Instant};

/// The workers' poll interval (the transport config's default).
const POLL: Duration = Duration::from_secs(1);
/// Slack for a process on a busy machine to act on what it read.
const SLACK: Duration = Duration::from_secs(2);

/// Waits until both workers' logs say `what` (a pause flag they read).
async fn both_logged(workers: &[Worker; 2], what: &str, bound: Duration) {
    common::eventually(what, bound, async || {
        workers.iter().all(|w| w.log().contains(what))
    })
    .await;
}

#[tokio::test]
async fn pause_stops_claiming_on_both_replicas_within_one_poll_interval_while_in_flight_work_finishes_and_resume_restarts_it()
 {
    let Some(mut stage) = Stage::answering_after(Duration::from_secs(2)).await else {
        return;
    };
    let workers = [(); 2].map(|_| Worker::start(&stage.url, &stage.gateway.base_url(), "30s"));
    let mut first = common::go_submit_numbered(&mut stage.conn, 4).await;
    common::eventually("in-flight claims", Duration::from_secs(10), async || {
        common::depths(&mut stage.conn).await.claimed == 4
    })
    .await;

    let paused = admin(&stage.url, &["pause", common::QUEUE]);
    assert!(paused.ok().contains("paused"), "{}", paused.stdout);
    both_logged(&workers, "queue paused by an operator", POLL + SLACK).await;
    let deadline = common::unix_now() + 600;
    for i in 0..6 {
        let id = format!("later-{i}");
        common::go_submit(&mut stage.conn, &id, deadline, serde_json::json!({})).await;
    }
    // The in-flight requests finish and are answered while paused.
    common::eventually("in-flight records", Duration::from_secs(10), async || {
        common::depths(&mut stage.conn).await.results == 4
    })
    .await;
    // Nothing more is claimed over three poll intervals.
    let watched = Instant::now();
    while watched.elapsed() < 3 * POLL {
        let d = common::depths(&mut stage.conn).await;
        assert!(
            d.pending == 6 && d.nothing_claimed(),
            "claimed while paused: {d:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let stats = admin(&stage.url, &["--json", "stats"]).json();
    assert_eq!(stats[0]["paused"], true);
    assert_eq!(stats[0]["pending"], 6);

    let resumed = admin(&stage.url, &["resume", common::QUEUE]);
    assert!(resumed.ok().contains("resumed"), "{}", resumed.stdout);
    common::eventually("claims after the resume", POLL + SLACK, async || {
        common::depths(&mut stage.conn).await.pending == 0
    })
    .await;
    both_logged(&workers, "queue resumed by an operator", POLL + SLACK).await;
    common::eventually("every record", Duration::from_secs(10), async || {
        common::depths(&mut stage.conn).await.results == 10
    })
    .await;
    first.extend((0..6).map(|i| format!("later-{i}")));
    let counts = common::records_per_id(&common::records(&mut stage.conn).await);
    assert!(counts.values().all(|n| *n == 1), "{counts:?}");
    assert_eq!(
        counts
            .into_keys()
            .collect::<std::collections::BTreeSet<_>>(),
        first
    );
    for mut w in workers {
        w.stop_within(Duration::from_secs(15)).await;
    }
}

#[tokio::test]
async fn release_of_a_claim_held_by_a_stalled_worker_gets_it_redelivered_at_once_and_one_record_in_the_end()
 {
    let Some(mut stage) = Stage::answering_after(Duration::from_secs(2)).await else {
        return;
    };
    // A 60 s lease: only the release can bring the claim back this soon.
    let mut stalled = Worker::start(&stage.url, &stage.gateway.base_url(), "60s");
    let ids = common::go_submit_numbered(&mut stage.conn, 1).await;
    let id = ids.first().unwrap().clone();
    common::eventually("the claim", Duration::from_secs(10), async || {
        common::depths(&mut stage.conn).await.claimed == 1
    })
    .await;
    stalled.signal("STOP");
    let mut healthy = Worker::start(&stage.url, &stage.gateway.base_url(), "60s");

    let claims = admin(&stage.url, &["--json", "claims"]).json();
    let owner = claims[0]["owner"].as_str().unwrap().to_owned();
    assert_eq!(claims[0]["id"], id.as_str());
    let released = admin(&stage.url, &["--json", "release", &id]).json();
    assert_eq!(released[0]["owner"], owner.as_str());
    // Redelivered at once: the healthy worker's next poll claims it and the
    // gateway (2 s) answers, long before the 60 s lease would have ended.
    let started = Instant::now();
    common::eventually(
        "the redelivered record",
        Duration::from_secs(10),
        async || common::depths(&mut stage.conn).await.results == 1,
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let d = common::depths(&mut stage.conn).await;
    assert!(d.pending == 0 && d.nothing_claimed(), "{d:?}");

    // The stalled worker wakes, finishes its call and offers its late
    // result: suppressed. It drains and exits cleanly.
    stalled.signal("CONT");
    stalled.stop_within(Duration::from_secs(20)).await;
    healthy.stop_within(Duration::from_secs(15)).await;
    let counts = common::records_per_id(&common::records(&mut stage.conn).await);
    assert_eq!(counts.get(&id), Some(&1), "{counts:?}");
    assert_eq!(counts.len(), 1);
}
