//! `async-worker admin cancel` against a real worker process: a request cancelled while pending (its queue paused) and one cancelled in flight each end with one `CANCELLED` record, the in-flight one within a heartbeat, through the Go producer's cancel key.
//!
//! The gateway answers after 30 s, so a record sooner than that is the
//! cancel's. Workers run with 3 s leases (a heartbeat a second); every
//! wait polls with a bound.

mod common;

use claim_core::wire::{self, ErrorCode};
use common::QUEUE;
use common::admin::admin;
use common::stage::Stage;
use common::worker::Worker;
use redis::AsyncCommands;
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_request_cancelled_in_flight_or_while_pending_ends_with_one_cancelled_record_each() {
    let Some(mut stage) = Stage::answering_after(Duration::from_secs(30)).await else {
        return;
    };
    let mut worker = Worker::start(&stage.url, &stage.gateway.base_url(), "3s");
    let deadline = common::unix_now() + 600;
    common::go_submit(
        &mut stage.conn,
        "in-flight",
        deadline,
        serde_json::json!({}),
    )
    .await;
    common::eventually("the claim", Duration::from_secs(15), async || {
        common::depths(&mut stage.conn).await.claimed == 1
    })
    .await;

    let cancelled = admin(&stage.url, &["cancel", "in-flight"]);
    let at = Instant::now();
    let out = cancelled.ok();
    assert!(
        out.contains("cancel key written: request-cancel:in-flight"),
        "{out}"
    );
    assert!(
        out.contains("claimed") && out.contains("in flight"),
        "{out}"
    );
    let key: Option<String> = stage.conn.get(wire::cancel_key("in-flight")).await.unwrap();
    assert_eq!(
        key,
        Some(common::token("in-flight")),
        "Go's cancel key, the active token"
    );
    common::eventually("the in-flight record", Duration::from_secs(5), async || {
        common::depths(&mut stage.conn).await.results == 1
    })
    .await;
    assert!(
        at.elapsed() < Duration::from_secs(5),
        "within a few heartbeats"
    );

    // Pending: the queue paused so that no worker claims it first.
    assert_eq!(admin(&stage.url, &["pause", QUEUE]).code, 0);
    common::eventually("the pause seen", Duration::from_secs(5), async || {
        worker.log().contains("queue paused by an operator")
    })
    .await;
    common::go_submit(&mut stage.conn, "queued", deadline, serde_json::json!({})).await;
    let report = admin(&stage.url, &["--json", "cancel", "queued"]).json();
    assert_eq!(report["cancel_key_written"], true);
    assert_eq!(report["found"][0]["place"], "pending", "{report}");
    assert_eq!(report["found"][0]["token"], common::token("queued"));
    assert_eq!(admin(&stage.url, &["resume", QUEUE]).code, 0);
    common::eventually(
        "the pending request's record",
        Duration::from_secs(10),
        async || common::depths(&mut stage.conn).await.results == 2,
    )
    .await;

    let (records, ids) = common::records_once_each(&mut stage.conn).await;
    assert_eq!(ids.len(), 2, "{records:?}");
    assert!(
        records
            .iter()
            .all(|r| r.error_code == Some(ErrorCode::Cancelled)),
        "{records:?}"
    );
    let d = common::depths(&mut stage.conn).await;
    assert!(d.pending == 0 && d.nothing_claimed(), "{d:?}");
    worker.stop_within(Duration::from_secs(15)).await;
}
