//! Redis restarts: with AOF `appendfsync always` a SIGKILLed server keeps its claims, and scripts reload unnoticed.

mod common;

use claim_core::store::{ClaimOutcome, ClaimRequest};
use claim_core::{ClaimStore, Generation, Member, OwnerToken};
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
    };
    store.submit("q", &submission).await.unwrap();
    let owner = OwnerToken::new("doomed-worker");
    let claimed = store
        .claim("q", &owner, std::slice::from_ref(&req))
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
        .claim("q", &OwnerToken::new("survivor"), &[req])
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

#[tokio::test]
async fn every_script_reloads_transparently_after_the_script_cache_is_flushed() {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    let (store, _clock) = common::manual_store(&server.url(), common::config()).await;
    let mut raw = common::raw(&server.url()).await;
    let (req, deadline) = request("b");
    let submission = claim_core::store::Submission {
        member: req.member.clone(),
        generation: req.generation.clone(),
        deadline,
    };
    store.submit("q", &submission).await.unwrap();
    let owner = OwnerToken::new("w");
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut raw)
        .await
        .unwrap();
    store
        .claim("q", &owner, std::slice::from_ref(&req))
        .await
        .expect("claim after flush");
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut raw)
        .await
        .unwrap();
    let gens = [req.generation.clone()];
    assert_eq!(
        store
            .release("q", &owner, &gens)
            .await
            .expect("release after flush"),
        vec![true]
    );
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(store.cancel("b").await.expect("cancel after flush"));
}
