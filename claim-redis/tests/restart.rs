//! Redis restarts: with AOF `appendfsync always` a SIGKILLed server keeps its claims, and scripts reload unnoticed.

mod common;

use claim_core::store::{ClaimOutcome, ClaimRequest};
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, Generation, Member, OwnerToken};
use claim_redis::testing::RedisServerOptions;
use common::T0;

fn request(id: &str) -> (ClaimRequest, i64) {
    let deadline = (T0.0 / 1000) as i64 + 3600;
    let member = Member::from(common::member(id, "t", deadline));
    (
        ClaimRequest {
            member,
            generation: Generation::new(id, "t"),
        },
        deadline,
    )
}

#[tokio::test]
async fn a_claim_survives_sigkill_and_restart_and_is_reclaimed_after_its_lease() {
    let Some(mut server) = common::server(RedisServerOptions { aof_always: true }) else {
        return;
    };
    let (store, clock) = common::manual_store(&server.url(), common::config()).await;
    let (req, deadline) = request("a");
    let submission = claim_core::store::Submission {
        member: req.member.clone(),
        generation: req.generation.clone(),
        deadline,
        payload: None,
    };
    store.submit("q", &submission).await.unwrap();
    let owner = OwnerToken::new("doomed-worker");
    let claimed = store
        .claim(owner.on("q"), std::slice::from_ref(&req))
        .await
        .unwrap();
    assert!(matches!(claimed[0], ClaimOutcome::Claimed { .. }));

    server.kill();
    server.restart().expect("restart on the same data dir");

    // The first call after the restart already works: the pool replaces
    // its dead connections and the scripts are reloaded on NOSCRIPT.
    let claims = store.claims("q").await.expect("claims after restart");
    assert_eq!(claims.len(), 1, "the claim was on disk before the kill");
    assert_eq!(
        (claims[0].owner.clone(), claims[0].member.clone()),
        (owner, req.member.clone())
    );
    clock.advance(29_000);
    assert_eq!(store.reclaim_expired("q", 10).await.unwrap().redelivered, 0);
    clock.advance(1_000);
    let report = store
        .reclaim_expired("q", 10)
        .await
        .expect("script runs after the restart");
    assert_eq!(report.redelivered, 1, "reclaimed once its lease expired");
    let again = store
        .claim(OwnerToken::new("survivor").on("q"), &[req])
        .await
        .unwrap();
    assert!(matches!(
        again[0],
        ClaimOutcome::Claimed {
            redeliveries: 1,
            ..
        }
    ));
}

/// Empties the server's script cache: the next call of every script meets NOSCRIPT.
async fn flush(raw: &mut redis::aio::MultiplexedConnection) {
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(raw)
        .await
        .unwrap();
}

#[tokio::test]
async fn every_script_reloads_transparently_after_the_script_cache_is_flushed() {
    let mut rig = rig_or_skip!();
    let reqs: Vec<(ClaimRequest, i64)> = ["a", "b", "c"].map(request).into();
    for (req, deadline) in &reqs {
        let submission = claim_core::store::Submission {
            member: req.member.clone(),
            generation: req.generation.clone(),
            deadline: *deadline,
            payload: None,
        };
        rig.store.submit("q", &submission).await.unwrap();
    }
    let [a, b, c] = [0, 1, 2].map(|i| reqs[i].0.clone());
    let owner = OwnerToken::new("w");
    // Each step flushes the cache first and checks the script's answer, so
    // every script (claim.lua .. cancel.lua, all ten) ran after a NOSCRIPT.
    flush(&mut rig.raw).await;
    let claimed = rig
        .store
        .claim(owner.on("q"), &[a.clone(), b.clone(), c.clone()])
        .await
        .expect("claim.lua after a flush");
    assert!(
        claimed
            .iter()
            .all(|o| matches!(o, ClaimOutcome::Claimed { .. }))
    );
    flush(&mut rig.raw).await;
    let renewed = rig
        .store
        .renew(owner.on("q"), std::slice::from_ref(&a.generation))
        .await;
    assert!(matches!(
        renewed.expect("renew.lua after a flush")[0],
        claim_core::store::RenewOutcome::Renewed { .. }
    ));
    flush(&mut rig.raw).await;
    let item = claim_core::store::AckItem {
        generation: a.generation.clone(),
        member: a.member.clone(),
        score: claim_core::Score(reqs[0].1 as f64),
        result_list: "results".into(),
        record: claim_core::Record::from("{}"),
        payload_ref: None,
        result_ttl_seconds: 0,
    };
    let acked = rig.store.ack(owner.on("q"), &[item]).await;
    assert!(acked.expect("ack.lua after a flush")[0].pushed);
    flush(&mut rig.raw).await;
    let b_gen = [b.generation.clone()];
    let released = rig.store.release(owner.on("q"), &b_gen).await;
    assert_eq!(released.expect("release.lua after a flush"), vec![true]);
    rig.store
        .claim(owner.on("q"), std::slice::from_ref(&b))
        .await
        .unwrap();
    flush(&mut rig.raw).await;
    let park = claim_core::store::ParkItem {
        generation: b.generation.clone(),
        member: b.member.clone(),
        due: T0.plus(1_000),
    };
    let parked = rig.store.park_retry(owner.on("q"), &[park]).await;
    assert_eq!(parked.expect("park_retry.lua after a flush"), vec![true]);
    rig.clock.advance(2_000);
    flush(&mut rig.raw).await;
    // The member names request-sortedset as its queue (the Go shape).
    let promoted = rig.store.promote_due(10).await;
    assert_eq!(promoted.expect("promote.lua after a flush"), 1);
    flush(&mut rig.raw).await;
    let dead = rig
        .store
        .dead_letter("request-sortedset", &b.member, "operator")
        .await;
    assert!(dead.expect("dead_letter.lua after a flush"));
    // An index entry gone missing: the reclaimer repairs it first.
    let index = rig.store.keys().queue("q").index;
    let _: i64 = redis::cmd("ZREM")
        .arg(&index)
        .arg(c.generation.claim_key())
        .query_async(&mut rig.raw)
        .await
        .unwrap();
    flush(&mut rig.raw).await;
    let report = rig.store.reclaim_expired("q", 10).await;
    assert_eq!(
        report
            .expect("repair_index.lua after a flush")
            .ghosts_repaired,
        1
    );
    rig.clock.advance(31_000);
    flush(&mut rig.raw).await;
    let report = rig.store.reclaim_expired("q", 10).await;
    assert_eq!(report.expect("reclaim.lua after a flush").redelivered, 1);
    flush(&mut rig.raw).await;
    assert!(
        rig.store
            .cancel("c")
            .await
            .expect("cancel.lua after a flush")
    );
}
