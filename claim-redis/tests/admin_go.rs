//! The operator's operations beside claim-enabled Go processors: `release_claim` of a Go claim, and the pause flag's key.

mod common;

use claim_core::{ClaimAdmin, ClaimInspect, ClaimStore, Generation, OwnerToken};
use claim_redis::testing::go::{self, GoQueue};
use redis::AsyncCommands;

const QUEUE: &str = "q";
const DEADLINE: i64 = common::T0_S + 3600;

#[tokio::test]
async fn an_operator_releases_a_go_processors_claim_to_pending_at_gos_score_and_go_finds_it_lost() {
    let mut rig = rig_or_skip!();
    let q = rig.store.keys().queue(QUEUE);
    let gq = GoQueue::new(q.clone());
    let member = String::from_utf8(common::member("a", "t", DEADLINE))
        .unwrap()
        .replacen(r#""internal":{"#, r#""internal":{"enqueue_seq":3,"#, 1)
        .into_bytes();
    let _: i64 = rig
        .raw
        .zadd(&q.pending, &member, DEADLINE as f64)
        .await
        .unwrap();
    let go_owner = go::owner_token();
    let won = gq.claim(&mut rig.raw, &member, "a\0t", &go_owner, common::T0_S + 300);
    assert!(won.await.unwrap());

    let g = Generation::new("a", "t");
    let released = rig.store.release_claim(QUEUE, &g).await.unwrap();
    assert_eq!(released, Some(OwnerToken::new(&go_owner)));
    let pending: Vec<(Vec<u8>, f64)> = rig.raw.zrange_withscores(&q.pending, 0, -1).await.unwrap();
    assert_eq!(pending, vec![(member.clone(), go::score(&member))]);
    assert_eq!(rig.store.depths(QUEUE).await.unwrap().claimed, 0);
    let renewed = gq.renew(&mut rig.raw, "a\0t", &go_owner, common::T0_S + 400);
    assert_ne!(renewed.await.unwrap(), 1, "Go's renew finds its claim gone");
    // Ours claims it at once.
    let r = claim_core::store::ClaimRequest {
        member: member.clone().into(),
        generation: g,
    };
    let out = rig
        .store
        .claim(OwnerToken::new("w").on(QUEUE), &[r])
        .await
        .unwrap();
    assert!(
        matches!(out[0], claim_core::store::ClaimOutcome::Claimed { .. }),
        "{out:?}"
    );
}

#[tokio::test]
async fn the_pause_flag_is_the_queues_paused_key() {
    let mut rig = rig_or_skip!();
    let key = rig.store.keys().queue(QUEUE).paused;
    assert!(key.ends_with("q:paused"), "{key}");
    assert!(rig.store.set_paused(QUEUE, true).await.unwrap());
    let exists: bool = rig.raw.exists(&key).await.unwrap();
    assert!(exists);
    let _: () = rig.raw.del(&key).await.unwrap();
    assert!(
        !rig.store.paused(QUEUE).await.unwrap(),
        "an operator's DEL resumes too"
    );
}
