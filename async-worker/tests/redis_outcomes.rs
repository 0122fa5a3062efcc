//! The runtime on a real redis-server with the default HTTP handler and a scripted gateway: each exit path ends in exactly the right single record.
//!
//! Requests enter the Go producer's way (one MULTI) and records are read the
//! Go consumer's way (BRPOP). The gateway (tests/common/rig.rs) picks its
//! answer from the prompt's prefix (`ok:`, `reject:`, `throttle:`, `flaky:`, `hang:`).
//! Leases are 3 s, the poll interval 50 ms and the retry backoff shortened,
//! so every test takes a few seconds at most. After each test's record, the
//! runtime is stopped and Redis is checked: nothing pending, claimed or
//! parked, and no second record (except where a test says otherwise).

mod common;

use claim_core::ClaimInspect;
use claim_core::wire::{ErrorCode, ResultRecord};
use common::QUEUE;
use common::rig::{ClosedGate, Rig, assert_error_without_status};
use redis::AsyncCommands;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_gateway_success_becomes_one_record_with_status_200_and_the_body_as_payload() {
    let Some((mut rig, report)) = Rig::answered("req-ok", "ok:1").await else {
        return;
    };
    assert_eq!(rig.gateway.calls.count(), 1);
    rig.assert_one_record_and_keys_deleted(
        &report,
        "req-ok",
        "the producer's keys of an answered generation are deleted",
    )
    .await;
}

#[tokio::test]
async fn a_gateway_4xx_becomes_one_inference_error_record_with_the_status_and_body() {
    let Some((mut rig, record, report)) = Rig::one_record("req-4xx", "reject:1", 60).await else {
        return;
    };
    let mut expected = ResultRecord::error("req-4xx", ErrorCode::InferenceError, "prompt rejected")
        .with_token(common::token("req-4xx"));
    expected.status_code = Some(400);
    assert_eq!(record, expected);
    assert_eq!(rig.gateway.calls.count(), 1, "a 4xx is not retried");
    rig.assert_settled_after_retries(&report, 0).await;
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_no_sooner_than_asked_and_ends_in_one_success_record() {
    let Some((mut rig, report)) = Rig::answered("req-429", "throttle:1").await else {
        return;
    };
    let times = rig.gateway.calls.times();
    assert_eq!(times.len(), 2, "one 429, then the success");
    let pause = times[1] - times[0];
    assert!(
        pause >= Duration::from_millis(950),
        "Retry-After: 1 is honoured over the 50 ms backoff, but the retry came after {pause:?}"
    );
    rig.assert_settled_after_retries(&report, 1).await;
}

#[tokio::test]
async fn a_500_is_retried_and_the_later_success_is_the_only_record() {
    let Some((mut rig, report)) = Rig::answered("req-500", "flaky:1").await else {
        return;
    };
    assert_eq!(rig.gateway.calls.count(), 2, "one 500, then the success");
    assert_eq!((report.retries, report.records_pushed), (1, 1));
    rig.assert_settled().await;
}

#[tokio::test]
async fn a_gateway_hanging_past_the_deadline_ends_in_one_deadline_exceeded_record_at_the_deadline()
{
    let Some(mut rig) = Rig::start().await else {
        return;
    };
    let submitted = Instant::now();
    rig.submit("req-hang", "hang:1", 3).await;
    let run = rig.run();
    let record = rig.record().await;
    let waited = submitted.elapsed();
    let report = run.stop().await;
    assert_error_without_status(&record, "req-hang", ErrorCode::DeadlineExceeded);
    assert!(
        waited < Duration::from_secs(8),
        "the 3 s deadline, not the 30 s request timeout, ends the call; took {waited:?}"
    );
    assert_eq!(rig.gateway.calls.count(), 1);
    rig.assert_settled_after_retries(&report, 0).await;
}

#[tokio::test]
async fn a_refused_connection_is_retried_until_the_deadline_then_recorded_once_as_deadline_exceeded()
 {
    let Some(mut rig) = Rig::start().await else {
        return;
    };
    let closed = format!("http://127.0.0.1:{}", common::free_port());
    rig.submit("req-refused", "ok:refused", 3).await;
    let run = rig.run_with(&closed, None);
    let record = rig.record().await;
    let report = run.stop().await;
    assert_error_without_status(&record, "req-refused", ErrorCode::DeadlineExceeded);
    assert!(
        report.retries >= 2,
        "a refused connection is retried with backoff until the deadline: {report:?}"
    );
    rig.assert_settled_after_one_record(&report).await;
}

#[tokio::test]
async fn a_producer_cancel_mid_flight_stops_the_call_and_records_cancelled_once() {
    let Some(mut rig) = Rig::start().await else {
        return;
    };
    rig.submit("req-cancel", "hang:cancel", 60).await;
    let run = rig.run();
    let calls = rig.gateway.calls.clone();
    common::eventually("the gateway call", Duration::from_secs(10), async || {
        calls.count() == 1
    })
    .await;
    common::go_cancel(&mut rig.conn, "req-cancel").await;
    let record = rig.record().await;
    let report = run.stop().await;
    assert_error_without_status(&record, "req-cancel", ErrorCode::Cancelled);
    assert_eq!(
        rig.gateway.calls.count(),
        1,
        "a cancelled request is not retried"
    );
    rig.assert_one_record_and_keys_deleted(
        &report,
        "req-cancel",
        "the cancelled generation's active and cancel keys are deleted",
    )
    .await;
}

#[tokio::test]
async fn a_request_whose_deadline_passed_in_the_queue_is_recorded_deadline_exceeded_without_calling_the_gateway()
 {
    let Some((mut rig, record, report)) = Rig::one_record("req-late", "ok:late", -5).await else {
        return;
    };
    assert_error_without_status(&record, "req-late", ErrorCode::DeadlineExceeded);
    assert_eq!(rig.gateway.calls.count(), 0, "the gateway is never called");
    rig.assert_settled_after_one_record(&report).await;
}

#[tokio::test]
async fn a_malformed_member_moves_to_the_dead_set_with_a_reason_and_gets_no_record() {
    let Some(mut rig) = Rig::start().await else {
        return;
    };
    let garbage = "this is not JSON";
    let _: () = rig
        .conn
        .zadd(QUEUE, garbage, common::unix_now() + 60)
        .await
        .unwrap();
    let store = rig.store.clone();
    let report = rig
        .run()
        .stop_once("the dead-set entry", async || {
            !store.dead_entries(QUEUE).await.unwrap().is_empty()
        })
        .await;
    let dead = rig.store.dead_entries(QUEUE).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].member.as_bytes(), garbage.as_bytes());
    assert!(!dead[0].reason.trim().is_empty(), "the dead entry says why");
    assert_eq!(report.dead_lettered, 1);
    rig.assert_uncalled_leaving(
        |left| left.dead = 1,
        "no record, nothing pending or claimed: only the dead entry",
    )
    .await;
}

#[tokio::test]
async fn a_closed_gate_claims_nothing_and_leaves_the_request_pending_without_a_record() {
    let Some(mut rig) = Rig::start().await else {
        return;
    };
    let deadline = common::unix_now() + 60;
    common::go_submit(
        &mut rig.conn,
        "req-gated",
        deadline,
        serde_json::json!({"prompt": "ok:gated"}),
    )
    .await;
    let gate = Arc::new(ClosedGate::default());
    let report = rig
        .run_with(&rig.gateway.base_url.clone(), Some(gate.clone()))
        .stop_once("five refusals", async || {
            gate.asked.load(Ordering::SeqCst) >= 5
        })
        .await;
    assert_eq!(report.claimed, 0);
    rig.assert_uncalled_leaving(
        |left| left.pending = 1,
        "the request stays pending, unclaimed, without a record",
    )
    .await;
    assert_eq!(
        common::member_ids(&mut rig.conn, QUEUE).await,
        ["req-gated"]
    );
    let scores: Vec<(Vec<u8>, f64)> = rig.conn.zrange_withscores(QUEUE, 0, -1).await.unwrap();
    assert_eq!(scores[0].1, deadline as f64, "still at its deadline score");
}

/// ZADDs the Go producer's member of `id`, due at `deadline`, at `score`
/// (Redis's text, `+inf` included): a producer that scores as it likes.
async fn zadd_scored(rig: &mut Rig, id: &str, deadline: i64, score: &str, prompt: &str) {
    let payload = serde_json::json!({"model": "m", "prompt": prompt});
    let member =
        claim_core::wire::Envelope::new(id, common::token(id), deadline, payload).to_bytes();
    let _: () = redis::cmd("ZADD")
        .arg(QUEUE)
        .arg(score)
        .arg(member)
        .query_async(&mut rig.conn)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_member_whose_deadline_and_score_are_9223372036854775807_gets_one_invalid_request_record_and_leaves_nothing_claimed()
 {
    let Some(mut rig) = Rig::start().await else {
        return;
    };
    let max = i64::MAX.to_string();
    let soon = common::unix_now() + 60;
    zadd_scored(&mut rig, "req-max", i64::MAX, &max, "ok:max").await;
    zadd_scored(&mut rig, "req-big-score", soon, &max, "ok:big").await;
    zadd_scored(&mut rig, "req-inf", soon, "+inf", "ok:inf").await;
    zadd_scored(&mut rig, "req-neg-inf", soon, "-inf", "ok:neg").await;
    let run = rig.run();
    let mut records = std::collections::BTreeMap::new();
    for _ in 0..4 {
        let record = rig.record().await;
        assert!(
            records.insert(record.id.clone(), record).is_none(),
            "one record per request"
        );
    }
    let report = run.stop().await;
    assert_error_without_status(&records["req-max"], "req-max", ErrorCode::InvalidRequest);
    for id in ["req-big-score", "req-inf", "req-neg-inf"] {
        assert_eq!(
            records[id].status_code,
            Some(200),
            "{id}: {:?}",
            records[id]
        );
    }
    assert_eq!(
        rig.gateway.calls.count(),
        3,
        "the invalid member is never sent"
    );
    assert_eq!((report.records_pushed, report.redelivered), (4, 0));
    rig.assert_settled().await;
}

#[tokio::test]
async fn a_member_scored_zero_keeps_its_lease_while_it_runs_past_it_and_is_delivered_once() {
    let Some(mut rig) = Rig::start().await else {
        return;
    };
    // The gateway hangs until the 5 s deadline: longer than the 3 s lease,
    // so the holder must renew a lease that the score 0 must not shorten.
    zadd_scored(
        &mut rig,
        "req-zero",
        common::unix_now() + 5,
        "0",
        "hang:zero",
    )
    .await;
    let run = rig.run();
    let record = rig.record().await;
    let report = run.stop().await;
    assert_error_without_status(&record, "req-zero", ErrorCode::DeadlineExceeded);
    assert_eq!(rig.gateway.calls.count(), 1, "never redelivered while held");
    assert_eq!(
        (report.redelivered, report.lease_lost),
        (0, 0),
        "{report:?}"
    );
    rig.assert_settled_after_one_record(&report).await;
}
