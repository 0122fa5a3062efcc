//! The split (cross-slot) ack cannot lose a request: its drop step ends only what this ack answered, and with `replica_acks` its push is replicated before the claim goes.
//!
//! The stale-ack race is staged on a private Redis Cluster on an explicit
//! clock: the result list's primary refuses writes for a moment (`CLIENT
//! PAUSE WRITE`, no failover), so the ack's fence has run on the queue's
//! primary while its push waits; in between the request comes back to
//! pending. The WAIT ordering is pinned on one server in the hash-tagged
//! layout, without a replica: every `WAIT` falls short.

mod common;

use claim_core::ListReads;
use claim_core::store::{AckOutcome, ClaimOutcome, Submission};
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, Clock, ManualClock, OwnerToken};
use claim_redis::slots::hash_slot;
use claim_redis::testing::RedisServerOptions;
use claim_redis::testing::go::{self, GoQueue};
use claim_redis::{KeyLayout, RedisStore, RedisStoreOptions, TimeSource};
use common::{DEADLINE, ack_item, evalsha_calls};
use std::sync::Arc;
use std::time::{Duration, Instant};

const QUEUE: &str = "jobs";

async fn claimed(store: &RedisStore, owner: &OwnerToken, s: &Submission) {
    let out = store
        .claim(owner.on(QUEUE), &[s.claim_request()])
        .await
        .unwrap();
    assert!(matches!(out[..], [ClaimOutcome::Claimed { .. }]), "{out:?}");
}

/// A private cluster on an explicit clock, a store on it, a result list on
/// another primary than the queue's, raw connections to both primaries,
/// and one round trip done (every script has run on both).
struct Split {
    _cluster: claim_redis::testing::RedisCluster,
    clock: Arc<ManualClock>,
    options: RedisStoreOptions,
    store: RedisStore,
    list: String,
    queue_node: redis::aio::MultiplexedConnection,
    list_node: redis::aio::MultiplexedConnection,
}

async fn split() -> Option<Split> {
    let cluster = common::cluster::private(0).await?;
    let clock = ManualClock::new(common::T0);
    let options = RedisStoreOptions {
        call_timeout: Duration::from_secs(10),
        time: TimeSource::Clock(clock.clone() as Arc<dyn Clock>),
        ..common::cluster::options(&cluster, common::config())
    };
    let store = RedisStore::connect(options.clone()).await.expect("connect");
    let keys = store.keys().clone();
    let primary_of = |key: &str| {
        cluster
            .primary_of_slot(cluster.key_slot(key).unwrap())
            .unwrap()
    };
    let queue_port = primary_of(&keys.queue(QUEUE).pending);
    let list = (0..100)
        .map(|i| format!("results-{i}"))
        .find(|l| primary_of(&keys.list(l)) != queue_port)
        .expect("a list on another primary");
    let url = |port: u16| format!("redis://127.0.0.1:{port}");
    let queue_node = common::raw(&url(queue_port)).await;
    let list_node = common::raw(&url(primary_of(&keys.list(&list)))).await;
    common::round::round_trip(&store, QUEUE, &list, "warm-up", DEADLINE)
        .await
        .expect("a first round trip");
    Some(Split {
        _cluster: cluster,
        clock,
        options,
        store,
        list,
        queue_node,
        list_node,
    })
}

impl Split {
    /// Starts `owner`'s ack of `s` while the list's primary refuses writes
    /// (`CLIENT PAUSE WRITE`), and returns once its fence has run on the
    /// queue's primary: its push waits until [`Self::unpause`].
    async fn ack_held_before_its_push(
        &mut self,
        owner: &OwnerToken,
        s: &Submission,
        text: &str,
    ) -> tokio::task::JoinHandle<Result<Vec<AckOutcome>, claim_core::StoreError>> {
        let _: () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(20_000)
            .arg("WRITE")
            .query_async(&mut self.list_node)
            .await
            .unwrap();
        let fences = evalsha_calls(&mut self.queue_node).await;
        let ack = {
            let (store, item) = (self.store.clone(), ack_item(s, &self.list, text));
            let owner = owner.clone();
            tokio::spawn(async move { store.ack(owner.on(QUEUE), &[item]).await })
        };
        let started = Instant::now();
        while evalsha_calls(&mut self.queue_node).await == fences {
            assert!(started.elapsed() < Duration::from_secs(10), "no fence ran");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        ack
    }

    async fn unpause(&mut self) {
        let _: () = redis::cmd("CLIENT")
            .arg("UNPAUSE")
            .query_async(&mut self.list_node)
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_ack_whose_fence_found_the_request_elsewhere_leaves_the_copy_returned_before_its_drop()
 {
    let Some(mut rig) = split().await else {
        return;
    };
    let (store, clock, list) = (rig.store.clone(), rig.clock.clone(), rig.list.clone());
    let q = store.keys().queue(QUEUE);
    let (w1, w2) = (OwnerToken::new("w1"), OwnerToken::new("w2"));
    let s = common::submission("a", "t", DEADLINE);
    store.submit(QUEUE, &s).await.unwrap();
    claimed(&store, &w1, &s).await;
    // w1's lease lapses and the reclaimer puts the request back; a Go
    // processor of the same fleet takes it (a bare owner token).
    clock.advance(common::config().lease_ttl_ms + 1_000);
    let report = store.reclaim_expired(QUEUE, 10).await.unwrap();
    assert_eq!(report.redelivered, 1, "{report:?}");
    let gq = GoQueue::new(q.clone());
    let (key, go_owner) = (s.generation.claim_key(), go::owner_token());
    let expiry = clock.now().0 as i64 / 1000 + 30;
    let won = gq.claim(
        &mut rig.queue_node,
        s.member.as_bytes(),
        &key,
        &go_owner,
        expiry,
    );
    assert!(won.await.unwrap(), "the Go processor claims it");

    // w1's stale ack: its fence runs while the list's primary holds its
    // push back, and finds the request with the Go processor: not ours.
    let ack = rig.ack_held_before_its_push(&w1, &s, "w1, stale").await;
    // Before the ack's drop, the Go processor lets go of the request: back
    // in pending as these very bytes, its only copy.
    let score = go::score(s.member.as_bytes());
    let released = gq
        .release(&mut rig.queue_node, &key, &go_owner, score)
        .await;
    assert!(released.unwrap(), "the Go processor releases it");
    rig.unpause().await;
    let out = ack.await.unwrap().expect("the stale ack");
    assert_eq!(
        out,
        vec![AckOutcome {
            pushed: false,
            claim_dropped: false,
            dead_lettered: false,
            own_record_landed: false,
        }]
    );
    assert!(
        store.results(&list).await.unwrap().len() == 1,
        "warm-up only"
    );
    let pending = store.peek(QUEUE, 0, 10).await.unwrap();
    assert_eq!(
        pending.iter().map(|e| e.member.clone()).collect::<Vec<_>>(),
        vec![s.member.clone()],
        "the returned copy is still pending"
    );
    // Its next holder answers it: one record.
    claimed(&store, &w2, &s).await;
    let out = store.ack(w2.on(QUEUE), &[ack_item(&s, &list, "w2")]).await;
    let out = out.unwrap()[0];
    assert!(out.pushed && out.claim_dropped, "{out:?}");
    assert_eq!(store.results(&list).await.unwrap().len(), 2);
}

#[tokio::test]
async fn with_replica_acks_a_split_ack_whose_push_no_replica_acknowledged_keeps_the_claim() {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    let clock = ManualClock::new(common::T0);
    let options = RedisStoreOptions {
        key_layout: KeyLayout::HashTagged,
        replica_acks: 1,
        call_timeout: Duration::from_millis(400),
        ..common::options(
            &server.url(),
            common::config(),
            TimeSource::Clock(clock.clone() as Arc<dyn Clock>),
        )
    };
    let store = RedisStore::connect(options).await.expect("connect");
    let keys = store.keys().clone();
    // The list the member routes to, in another slot than the queue.
    let list = "result-list";
    assert_ne!(
        hash_slot(keys.list(list).as_bytes()),
        hash_slot(keys.queue(QUEUE).pending.as_bytes())
    );
    let w1 = OwnerToken::new("w1");
    let s = common::submission("a", "t", DEADLINE);
    store.submit(QUEUE, &s).await.unwrap();
    claimed(&store, &w1, &s).await;
    let before = store.replica_ack_stats();
    let out = store.ack(w1.on(QUEUE), &[ack_item(&s, list, "one")]).await;
    let out = out.unwrap()[0];
    // No replica took the push: the claim is not dropped on the primary's
    // word alone (a failover could still lose the record).
    assert!(out.pushed && !out.claim_dropped, "{out:?}");
    assert_eq!(store.claims(QUEUE).await.unwrap().len(), 1, "still held");
    let after = store.replica_ack_stats();
    assert!(after.shortfalls > before.shortfalls, "{after:?}");
    // The claim lapses; the reclaimer finds the record's marker in the
    // list's slot and drops the claim as answered: one record, nothing left.
    clock.advance(common::config().lease_ttl_ms + 1_000);
    let report = store.reclaim_expired(QUEUE, 10).await.unwrap();
    assert_eq!(
        (report.redelivered, report.ghosts_repaired),
        (0, 1),
        "{report:?}"
    );
    assert_eq!(store.results(list).await.unwrap().len(), 1);
    assert!(store.claims(QUEUE).await.unwrap().is_empty());
    assert!(store.peek(QUEUE, 0, 10).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owners_split_ack_whose_claim_moved_on_before_its_drop_guards_the_new_holder_past_the_dedup_ttl()
 {
    let Some(mut rig) = split().await else {
        return;
    };
    let (store, clock, list) = (rig.store.clone(), rig.clock.clone(), rig.list.clone());
    // w2's own process: connections of its own, not queued behind w1's
    // held-back push.
    let other = RedisStore::connect(rig.options.clone())
        .await
        .expect("connect");
    let (w1, w2) = (OwnerToken::new("w1"), OwnerToken::new("w2"));
    let s = common::submission("a", "t", DEADLINE);
    store.submit(QUEUE, &s).await.unwrap();
    claimed(&store, &w1, &s).await;
    // w1's ack: its fence finds w1 holding the claim (so its push writes a
    // marker for the dedup TTL only) while the list's primary holds the
    // push back.
    let ack = rig.ack_held_before_its_push(&w1, &s, "w1").await;
    // Before the push, w1's lease lapses and w2 takes the request.
    clock.advance(common::config().lease_ttl_ms + 1_000);
    let report = other.reclaim_expired(QUEUE, 10).await.unwrap();
    assert_eq!(report.redelivered, 1, "{report:?}");
    claimed(&other, &w2, &s).await;
    rig.unpause().await;
    let out = ack.await.unwrap().expect("w1's ack")[0];
    assert!(out.pushed && !out.claim_dropped, "{out:?}");
    // w2 holds a claim that can last until the deadline + 30 s: the
    // answer must still stop it after the dedup TTL (1 h) has passed.
    clock.set(common::T0.plus(common::config().result_dedup_ttl_ms + 60_000));
    assert!(store.is_terminal(&s.generation).await.unwrap());
    let out = store.ack(w2.on(QUEUE), &[ack_item(&s, &list, "w2")]).await;
    let out = out.unwrap()[0];
    assert!(!out.pushed && out.claim_dropped, "{out:?}");
    assert_eq!(
        store.results(&list).await.unwrap().len(),
        2,
        "warm-up and w1's"
    );
}
