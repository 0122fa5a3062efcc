//! One request through the whole protocol (submit, claim, ack, read the record back), for the topology tests.

use claim_core::ListReads;
use claim_core::store::{AckItem, ClaimOutcome, ClaimRequest};
use claim_core::{ClaimProducer, ClaimStore, Generation, OwnerToken, StoreError};
use claim_redis::RedisStore;

/// Submits `id` to `queue`, claims it as `owner`, acks it into `list` and
/// checks the record landed. The first error (of any call) is returned.
pub async fn round_trip(
    store: &RedisStore,
    queue: &str,
    list: &str,
    id: &str,
    deadline: i64,
) -> Result<(), StoreError> {
    let submission = super::submission(id, "t", deadline);
    store.submit(queue, &submission).await?;
    let owner = OwnerToken::new("round-trip");
    let req = ClaimRequest {
        member: submission.member.clone(),
        generation: Generation::new(id, "t"),
    };
    let claimed = store
        .claim(owner.on(queue), std::slice::from_ref(&req))
        .await?;
    let ClaimOutcome::Claimed { score, .. } = claimed[0] else {
        panic!("{id}: not claimed: {:?}", claimed[0]);
    };
    let record = format!(r#"{{"id":"{id}","payload":"done"}}"#);
    let item = AckItem {
        generation: req.generation.clone(),
        member: req.member.clone(),
        score,
        result_list: list.to_owned(),
        record: claim_core::Record::from(record.clone().into_bytes()),
        payload_ref: None,
        result_ttl_seconds: 0,
    };
    let acked = store.ack(owner.on(queue), &[item]).await?;
    assert!(acked[0].pushed, "{id}: {:?}", acked[0]);
    let results = store.results(list).await?;
    assert!(
        results.iter().any(|r| r.as_bytes() == record.as_bytes()),
        "{id}: record missing from {list}"
    );
    Ok(())
}

/// A store connected with `options` that has run one [`round_trip`] of
/// `id` (queue `q`, list `results`, a deadline far ahead); panics naming
/// `over` (how it connected) when either fails.
pub async fn connected(
    options: claim_redis::RedisStoreOptions,
    id: &str,
    over: &str,
) -> RedisStore {
    let store = RedisStore::connect(options)
        .await
        .unwrap_or_else(|e| panic!("connect {over}: {e}"));
    round_trip(&store, "q", "results", id, 4_000_000_000)
        .await
        .unwrap_or_else(|e| panic!("submit, claim and ack {over}: {e}"));
    store
}

/// Round trips (ids `after-1`, `after-2`, …) until one succeeds, across a
/// failover: every failure must be transient, no call may hang past 15 s,
/// and one must succeed within `recovery`. Returns how many failed.
pub async fn until_one_succeeds(
    store: &RedisStore,
    deadline: i64,
    recovery: std::time::Duration,
) -> u32 {
    let started = std::time::Instant::now();
    let mut failures = 0;
    for i in 1.. {
        let id = format!("after-{i}");
        let call = tokio::time::timeout(
            std::time::Duration::from_secs(15),
            round_trip(store, "q", "results", &id, deadline),
        )
        .await
        .expect("a call during the failover hangs");
        match call {
            Ok(()) => break,
            Err(e) => {
                assert!(e.is_transient(), "a failover error must be transient: {e}");
                failures += 1;
                assert!(
                    started.elapsed() < recovery,
                    "no successful round trip within {recovery:?}: {e}"
                );
                tokio::time::sleep(std::time::Duration::from_millis(150)).await;
            }
        }
    }
    eprintln!(
        "recovered after {failures} failed round trips in {:?}",
        started.elapsed()
    );
    failures
}
