//! `async_worker::admin::stats` on the memory store with explicit time: the counts, ages, rows and order the admin CLI and the status page show, and no payload in them.

use async_worker::admin::stats::{QueueRef, claim_rows, collect, dead_rows};
use claim_core::store::{ClaimRequest, ParkItem, StoreConfig, Submission};
use claim_core::wire::{self, Envelope};
use claim_core::{
    ClaimAdmin, ClaimProducer, ClaimStore, Generation, ManualClock, Member, Millis, OwnerToken,
};
use claim_memory::MemoryStore;

const A: &str = "queue-a";
const B: &str = "queue-b";
const T0: Millis = Millis(1_700_000_000_000);
const T0_S: i64 = 1_700_000_000;

/// Request `id` created `age_s` before T0, due `3600 + age_s` seconds after
/// T0 (no two share a deadline).
fn submission(id: &str, age_s: i64) -> Submission {
    let deadline = T0_S + 3600 + age_s;
    let payload = serde_json::json!({"prompt": "secret"});
    let mut envelope = Envelope::new(id, format!("tok-{id}"), deadline, payload);
    envelope.data.created = T0_S - age_s;
    Submission {
        member: envelope.to_bytes().into(),
        generation: Generation::new(id, format!("tok-{id}")),
        deadline,
        payload: None,
    }
}

fn claim(s: &Submission) -> Vec<ClaimRequest> {
    vec![s.claim_request()]
}

#[tokio::test]
async fn stats_count_every_place_measure_ages_from_created_and_split_parked_retries_by_queue() {
    let clock = ManualClock::new(T0);
    let config = StoreConfig {
        lease_ttl_ms: 30_000,
        default_queue: A.into(),
        default_result_list: "results".into(),
        ..StoreConfig::default()
    };
    let store = MemoryStore::with_clock(config, clock.clone());
    let (old, young, held, late, parked, dead) = (
        submission("old", 600),
        submission("young", 60),
        submission("held", 300),
        submission("late", 900),
        submission("parked", 10),
        submission("dead", 10),
    );
    for s in [&old, &young, &held, &late, &parked, &dead] {
        store.submit(A, s).await.unwrap();
    }
    let w1 = OwnerToken::new("w1");
    store.claim(w1.on(A), &claim(&late)).await.unwrap();
    clock.set(T0.plus(20_000));
    store
        .claim(OwnerToken::new("w2").on(A), &claim(&held))
        .await
        .unwrap();
    store.claim(w1.on(A), &claim(&parked)).await.unwrap();
    let stamped = wire::stamp_retry(parked.member.as_bytes(), B).unwrap();
    let item = ParkItem {
        generation: parked.generation.clone(),
        member: Member::from(stamped),
        due: T0.plus(3_600_000),
    };
    store.park_retry(w1.on(A), &[item]).await.unwrap();
    store
        .dead_letter(A, &dead.member, "unusable")
        .await
        .unwrap();
    store.set_paused(A, true).await.unwrap();
    // `late`'s lease (taken at T0) has ended; `held`'s has 20 s left.
    clock.set(T0.plus(40_000));

    let queues = [
        QueueRef::from_config(&store, A),
        QueueRef::from_config(&store, B),
    ];
    let stats = collect(&store, &queues).await.unwrap();
    let a = &stats[0];
    assert_eq!(
        (a.pending, a.claimed, a.dead, a.parked_retries),
        (2, 2, 1, 0)
    );
    assert_eq!((a.expiring_within_lease, a.expired), (2, 1));
    // The head of pending is the earliest deadline: `young`'s.
    assert_eq!(a.oldest_pending_age_ms, Some(100_000), "{a:?}");
    assert_eq!(
        a.oldest_claim_age_ms,
        Some(940_000),
        "late was created 900 s before T0"
    );
    assert!(a.paused);
    assert_eq!(a.result_lists[0].list, "results");
    let b = &stats[1];
    assert_eq!((b.parked_retries, b.pending, b.paused), (1, 0, false));

    let rows = claim_rows(&store, A, clock_now(&store).await)
        .await
        .unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["late", "held"], "least lease left first");
    assert_eq!(
        (rows[0].lease_left_ms, rows[1].lease_left_ms),
        (-10_000, 10_000)
    );
    assert_eq!(rows[1].owner, "w2");
    let dead_rows = dead_rows(&store, A).await.unwrap();
    assert_eq!(dead_rows[0].id.as_deref(), Some("dead"));
    assert_eq!(dead_rows[0].reason, "unusable");

    let shown = serde_json::to_string(&(stats, rows, dead_rows)).unwrap();
    assert!(
        !shown.contains("secret"),
        "no payload in what operators see"
    );
}

async fn clock_now(store: &MemoryStore) -> Millis {
    store.now().await.unwrap()
}
