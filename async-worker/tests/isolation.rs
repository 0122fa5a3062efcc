//! Poison isolation in the runtime (memory store, paused time): a refused, failing or hanging store call never holds up other requests, queues or shutdown.

#[path = "common/faulty.rs"]
mod faulty;
#[path = "common/memory_rig.rs"]
mod rig;

use claim_core::ClaimInspect;
use claim_core::ListReads;
use rig::*;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

#[tokio::test(start_paused = true)]
async fn a_request_whose_result_list_the_store_refuses_does_not_hold_up_the_others_and_ends_in_the_dead_set()
 {
    let s = setup();
    *s.store.faults.refuse_acks_to.lock().unwrap() = Some(POISON_LIST.into());
    let (token, handle) = start_with_one_bad(&s, "poison", POISON_LIST, 30).await;
    records_within(
        &s,
        Duration::from_secs(2),
        "record for every ordinary request",
        30,
    )
    .await;
    assert_eq!(
        answered(&s, RESULTS).await,
        ids("ok", 30),
        "each answered once"
    );
    // Given up twice (once per delivery), its lease lapses each time; at
    // max_deliveries 2 the reclaimer ends it with DELIVERY_LIMIT and the dead set.
    within(
        LEASE * 3,
        "the poison request in the dead set",
        async || !s.memory.dead_entries(A).await.unwrap().is_empty(),
    )
    .await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(
        report.given_up, 2,
        "refused alone once per delivery: {report:?}"
    );
    assert_eq!(report.records_pushed, 30);
    assert_pending_and_unclaimed(&s, A, 0).await;
    let dead = s.memory.dead_entries(A).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert!(dead[0].reason.contains("delivery"), "{:?}", dead[0].reason);
}

#[tokio::test(start_paused = true)]
async fn acks_of_one_queue_land_while_another_queues_acks_keep_failing_and_readiness_reports_it() {
    let s = setup();
    *s.store.faults.fail_acks_of_queue.lock().unwrap() = Some(A.into());
    submit_numbered(&s, A, "a", 5).await;
    let (health, token, handle) = start_watched(&s, &[A, B]);
    readiness_within(&health, Duration::from_secs(1), true).await;
    submit_numbered(&s, B, "b", 20).await;
    records_within(&s, Duration::from_secs(2), "queue b's records", 20).await;
    assert_eq!(answered(&s, RESULTS).await, ids("b", 20));
    assert!(
        health.is_ready(),
        "failing for less than a lease is not yet a reason"
    );
    readiness_within(&health, LEASE + Duration::from_secs(5), false).await;
    let why = health.not_ready_because().unwrap();
    assert!(why.contains("failed to land"), "{why}");
    assert!(health.is_alive(), "liveness does not follow the store");

    *s.store.faults.fail_acks_of_queue.lock().unwrap() = None;
    records_within(&s, Duration::from_secs(10), "queue a's records", 25).await;
    readiness_within(&health, Duration::from_secs(3), true).await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!((report.records_pushed, report.given_up), (25, 0));
}

#[tokio::test(start_paused = true)]
async fn an_out_of_memory_store_turns_readiness_off_until_it_recovers_and_nothing_is_lost() {
    let s = setup();
    s.store
        .faults
        .acks_out_of_memory
        .store(true, Ordering::SeqCst);
    let (health, token, handle) = start_watched(&s, &[A]);
    readiness_within(&health, Duration::from_secs(1), true).await;
    submit(&s, A, "ok-1", RESULTS).await;
    readiness_within(&health, Duration::from_secs(3), false).await;
    let why = health.not_ready_because().unwrap();
    assert!(why.contains("out of memory"), "{why}");
    s.store
        .faults
        .acks_out_of_memory
        .store(false, Ordering::SeqCst);
    records_within(&s, Duration::from_secs(10), "the record", 1).await;
    readiness_within(&health, Duration::from_secs(15), true).await;
    stop_within_bound(token, handle).await;
}

#[tokio::test(start_paused = true)]
async fn shutdown_ends_within_the_bound_while_the_store_hangs_and_a_survivor_answers_everything_after_the_lease()
 {
    let s = setup();
    submit_numbered(&s, A, "slow", 6).await;
    let (token, handle) = start(runtime(&s, &[A]));
    within(Duration::from_secs(2), "claims", async || {
        s.memory.depths(A).await.unwrap().claimed == 6
    })
    .await;
    s.store.faults.hang.store(true, Ordering::SeqCst);
    // Long enough for the heartbeat and the readiness ping to be stuck in calls too.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let began = Instant::now();
    stop_within_bound(token, handle).await;
    eprintln!("shutdown with a hanging store took {:?}", began.elapsed());
    assert!(s.memory.results(RESULTS).await.unwrap().is_empty());
    assert_eq!(
        s.memory.depths(A).await.unwrap().claimed,
        6,
        "left claimed, not lost"
    );

    s.store.faults.hang.store(false, Ordering::SeqCst);
    let (token, handle) = start(runtime(&s, &[A]));
    records_within(&s, LEASE * 2, "every record from the survivor", 6).await;
    assert_eq!(answered(&s, RESULTS).await, ids("slow", 6));
    let report = stop_within_bound(token, handle).await;
    assert_eq!(report.redelivered, 6);
}

#[tokio::test(start_paused = true)]
async fn a_failed_hand_off_release_is_retried_and_the_claims_return_to_pending() {
    let s = setup();
    submit_numbered(&s, A, "ok", 3).await;
    let shutdown = CancellationToken::new();
    // Shutdown fires just as the claim lands: the consumer must hand the claims back.
    *s.store.faults.after_claim.lock().unwrap() = Some(shutdown.clone());
    s.store.faults.failing_releases.store(2, Ordering::SeqCst);
    let handle = tokio::spawn(runtime(&s, &[A]).run(shutdown));
    let report = tokio::time::timeout(DRAIN + Duration::from_secs(10), handle)
        .await
        .expect("shutdown ends within the bound")
        .unwrap();
    assert_eq!(
        report.released, 3,
        "released after two failed attempts: {report:?}"
    );
    assert_eq!(s.store.faults.failing_releases.load(Ordering::SeqCst), 0);
    assert_pending_and_unclaimed(&s, A, 3).await;
    let claims = s.memory.claims(A).await.unwrap();
    assert!(claims.is_empty());
    assert_eq!(
        s.store.ack_calls.load(Ordering::SeqCst),
        0,
        "nothing was answered"
    );
}

#[tokio::test(start_paused = true)]
async fn a_store_that_stops_answering_turns_readiness_off_within_seconds_and_back_on_when_it_answers()
 {
    let s = setup();
    let (health, token, handle) = start_watched(&s, &[A]);
    readiness_within(&health, Duration::from_secs(1), true).await;
    s.store.faults.hang.store(true, Ordering::SeqCst);
    readiness_within(&health, Duration::from_secs(5), false).await;
    let why = health.not_ready_because().unwrap();
    assert!(why.contains("does not answer"), "{why}");
    assert!(health.is_alive());
    s.store.faults.hang.store(false, Ordering::SeqCst);
    readiness_within(&health, Duration::from_secs(5), true).await;
    stop_within_bound(token, handle).await;
}

#[tokio::test(start_paused = true)]
async fn a_member_whose_claim_the_store_refuses_alone_goes_to_the_dead_set_and_the_rest_of_its_batch_is_served()
 {
    let s = setup();
    *s.store.faults.refuse_claims_of.lock().unwrap() = Some("\"unclaimable\"".into());
    let (token, handle) = start_with_one_bad(&s, "unclaimable", RESULTS, 20).await;
    records_within(&s, Duration::from_secs(3), "every ordinary record", 20).await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(answered(&s, RESULTS).await, ids("ok", 20));
    let dead = s.memory.dead_entries(A).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert!(
        dead[0].reason.starts_with("claim refused"),
        "{}",
        dead[0].reason
    );
    assert_eq!(report.dead_lettered, 1);
    assert_pending_and_unclaimed(&s, A, 0).await;
}

#[tokio::test(start_paused = true)]
async fn when_the_store_refuses_every_claim_nothing_is_dead_lettered_and_the_consumer_pauses_between_polls()
 {
    let s = setup();
    // Every member holds a request token: the refusal is about the store, not a member.
    *s.store.faults.refuse_claims_of.lock().unwrap() = Some("request_token".into());
    submit_numbered(&s, A, "ok", 20).await;
    let (token, handle) = start(runtime(&s, &[A]));
    tokio::time::sleep(Duration::from_secs(10)).await;
    let calls = s.store.faults.claim_calls.load(Ordering::SeqCst);
    let report = stop_within_bound(token, handle).await;
    assert_eq!(report.dead_lettered, 0);
    assert!(s.memory.dead_entries(A).await.unwrap().is_empty());
    assert_eq!(
        s.memory.depths(A).await.unwrap().pending,
        20,
        "all still pending"
    );
    // 100 polls at most (poll interval 100 ms), each two batches of 10
    // members, each at most 2n - 1 = 19 calls while isolating.
    assert!(calls <= 100 * 2 * 19, "{calls} claim calls in 10 s");
}

#[tokio::test(start_paused = true)]
async fn a_request_failing_alone_as_transient_for_over_a_lease_while_others_land_is_given_up_and_ends_in_the_dead_set()
 {
    let s = setup();
    *s.store.faults.refuse_acks_to.lock().unwrap() = Some(POISON_LIST.into());
    s.store
        .faults
        .refuse_transiently
        .store(true, Ordering::SeqCst);
    submit(&s, A, "poison", POISON_LIST).await;
    let (token, handle) = start(runtime(&s, &[A]));
    // Ordinary traffic all along: its acks land, so the queue is served and
    // the failure is about the poison request, whatever its error's class.
    let mut ticks = 0;
    let started = Instant::now();
    while s.memory.dead_entries(A).await.unwrap().is_empty() {
        assert!(
            started.elapsed() < LEASE * 5,
            "no dead entry within {:?}",
            LEASE * 5
        );
        submit(&s, A, &format!("tick-{ticks:03}"), RESULTS).await;
        ticks += 1;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    records_within(&s, Duration::from_secs(2), "every tick answered", ticks).await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(report.given_up, 2, "given up once per delivery: {report:?}");
    assert_eq!(report.records_pushed, ticks);
    assert_pending_and_unclaimed(&s, A, 0).await;
}
