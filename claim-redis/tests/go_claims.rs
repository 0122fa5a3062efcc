//! A rolling upgrade beside claim-enabled Go processors: our scripts and Go's (`claim_redis::testing::go`) acting on each other's claims.

mod common;

use claim_core::store::{AckItem, ClaimOutcome, ClaimRequest, RenewOutcome};
use claim_core::{ClaimInspect, ClaimStore, Generation, Member, OwnerToken, Score};
use claim_redis::testing::go::{self, GoQueue};
use redis::AsyncCommands;

const QUEUE: &str = "q";
const LIST: &str = "result-list";
const DEADLINE: i64 = common::T0_S + 3600;

/// A Go producer's member with `internal.enqueue_seq`.
fn seq_member(id: &str, token: &str, seq: i64) -> Vec<u8> {
    let plain = String::from_utf8(common::member(id, token, DEADLINE)).unwrap();
    plain
        .replacen(
            r#""internal":{"#,
            &format!(r#""internal":{{"enqueue_seq":{seq},"#),
            1,
        )
        .into_bytes()
}

fn request(id: &str, token: &str, member: &[u8]) -> ClaimRequest {
    ClaimRequest {
        member: Member::from(member.to_vec()),
        generation: Generation::new(id, token),
    }
}

fn ack_item(r: &ClaimRequest, score: f64, payload: &str) -> AckItem {
    let g = &r.generation;
    AckItem {
        generation: g.clone(),
        member: r.member.clone(),
        score: Score(score),
        result_list: LIST.to_owned(),
        record: claim_core::Record::from(go::record(&g.id, &g.token, 200, payload).as_str()),
        payload_ref: None,
        result_ttl_seconds: 0,
    }
}

async fn pending(rig: &mut common::Rig) -> Vec<(Vec<u8>, f64)> {
    let key = rig.store.keys().queue(QUEUE).pending;
    rig.raw.zrange_withscores(key, 0, -1).await.unwrap()
}

/// Adds `member` to pending at `score`, as a producer or Go's mover does.
async fn add_pending(rig: &mut common::Rig, member: &[u8], score: f64) {
    let key = rig.store.keys().queue(QUEUE).pending;
    let _: i64 = rig.raw.zadd(key, member, score).await.unwrap();
}

async fn results(rig: &mut common::Rig) -> Vec<String> {
    rig.raw
        .lrange(rig.store.keys().list(LIST), 0, -1)
        .await
        .unwrap()
}

fn go_queue(rig: &common::Rig) -> GoQueue {
    GoQueue::new(rig.store.keys().queue(QUEUE))
}

#[tokio::test]
async fn our_claims_are_keyed_as_go_keys_them_in_all_four_places() {
    let mut rig = rig_or_skip!();
    let member = seq_member("a", "t", 1);
    add_pending(&mut rig, &member, DEADLINE as f64).await;
    let r = request("a", "t", &member);
    let out = rig.store.claim(OwnerToken::new("w").on(QUEUE), &[r]).await;
    assert!(matches!(out.unwrap()[0], ClaimOutcome::Claimed { .. }));
    let q = rig.store.keys().queue(QUEUE);
    let claimed: Vec<String> = rig.raw.hkeys(&q.claimed).await.unwrap();
    let owners: Vec<String> = rig.raw.hkeys(&q.owners).await.unwrap();
    let index: Vec<String> = rig.raw.zrange(&q.index, 0, -1).await.unwrap();
    assert_eq!(claimed, vec!["a\0t"]);
    assert_eq!((owners, index), (claimed.clone(), claimed));
}

#[tokio::test]
async fn a_lapsed_go_claim_is_returned_to_pending_at_the_members_score_not_dead_lettered() {
    let mut rig = rig_or_skip!();
    let gq = go_queue(&rig);
    let member = seq_member("a", "t", 5);
    let junk = b"not json".to_vec();
    for (m, key) in [(&member, "a\0t"), (&junk, "junk")] {
        add_pending(&mut rig, m, DEADLINE as f64).await;
        let owner = go::owner_token();
        let won = gq
            .claim(&mut rig.raw, m, key, &owner, common::T0_S + 10)
            .await;
        assert!(won.unwrap());
    }
    assert_eq!(
        rig.store
            .reclaim_expired(QUEUE, 10)
            .await
            .unwrap()
            .redelivered,
        0,
        "a live Go lease is left alone"
    );
    rig.clock.advance(11_000);
    let report = rig.store.reclaim_expired(QUEUE, 10).await.unwrap();
    assert_eq!((report.redelivered, report.dead_lettered), (2, 0));
    let expected = DEADLINE as f64 + 5.0 / f64::from(1 << 21);
    assert_eq!(
        pending(&mut rig).await,
        vec![(junk, 0.0), (member, expected)],
        "Go's formula, and 0 for an unparsable member, as Go's reclaimer"
    );
    let d = rig.store.depths(QUEUE).await.unwrap();
    assert_eq!((d.claimed, d.dead), (0, 0));
}

#[tokio::test]
async fn our_claim_overwrites_the_claim_go_kept_beside_its_parked_retry_and_fences_go() {
    let mut rig = rig_or_skip!();
    let gq = go_queue(&rig);
    let origin = seq_member("a", "t", 3);
    add_pending(&mut rig, &origin, DEADLINE as f64).await;
    let go_owner = go::owner_token();
    let won = gq.claim(&mut rig.raw, &origin, "a\0t", &go_owner, common::T0_S + 300);
    assert!(won.await.unwrap());
    // Go parks a retry (re-encoded bytes), keeps its claim; the copy comes back.
    let parked = String::from_utf8(origin.clone()).unwrap().replacen(
        r#""internal":{"#,
        r#""internal":{"retry_count":1,"#,
        1,
    );
    let score = go::score(parked.as_bytes());
    add_pending(&mut rig, parked.as_bytes(), score).await;

    let r = request("a", "t", parked.as_bytes());
    let w = OwnerToken::new("w");
    let out = rig.store.claim(w.on(QUEUE), std::slice::from_ref(&r)).await;
    assert!(matches!(out.unwrap()[0], ClaimOutcome::Claimed { .. }));
    assert_eq!(
        gq.renew(&mut rig.raw, "a\0t", &go_owner, common::T0_S + 400)
            .await
            .unwrap(),
        -1
    );
    let list = rig.store.keys().list(LIST);
    let fenced = gq.ack(&mut rig.raw, &list, "a\0t", &go_owner, "{}").await;
    assert!(!fenced.unwrap(), "Go's ack is fenced");
    let ours = rig
        .store
        .ack(w.on(QUEUE), &[ack_item(&r, score, "ok")])
        .await;
    assert!(ours.unwrap()[0].pushed);
    assert_eq!(results(&mut rig).await.len(), 1);
    let d = rig.store.depths(QUEUE).await.unwrap();
    assert_eq!((d.pending, d.claimed), (0, 0));
}

#[tokio::test]
async fn gos_reclaimer_returns_our_lapsed_claim_and_we_serve_it_again_once() {
    let mut rig = rig_or_skip!();
    let gq = go_queue(&rig);
    let dead = OwnerToken::new("dead");
    let (score, r, lapsed_s) = ours_claimed(&mut rig, 7, &dead).await;
    let member = r.member.as_bytes().to_vec();
    assert_eq!(gq.reclaim(&mut rig.raw, lapsed_s - 2).await.unwrap(), 0);
    assert_eq!(gq.reclaim(&mut rig.raw, lapsed_s).await.unwrap(), 1);
    assert_eq!(pending(&mut rig).await, vec![(member.clone(), score)]);
    assert_eq!(rig.store.depths(QUEUE).await.unwrap().claimed, 0);
    assert_eq!(
        rig.store
            .renew(dead.on(QUEUE), std::slice::from_ref(&r.generation))
            .await
            .unwrap(),
        vec![RenewOutcome::Lost]
    );

    let live = OwnerToken::new("live");
    let again = rig
        .store
        .claim(live.on(QUEUE), std::slice::from_ref(&r))
        .await
        .unwrap();
    assert!(
        matches!(again[0], ClaimOutcome::Claimed { .. }),
        "{again:?}"
    );
    let acked = rig
        .store
        .ack(live.on(QUEUE), &[ack_item(&r, score, "ok")])
        .await;
    let acked = acked.unwrap();
    assert!(acked[0].pushed && acked[0].claim_dropped);
    assert_eq!(results(&mut rig).await.len(), 1);
    let d = rig.store.depths(QUEUE).await.unwrap();
    assert_eq!((d.pending, d.claimed, d.dead), (0, 0, 0));
}

#[tokio::test]
async fn a_go_claim_shows_its_go_owner_and_our_renew_and_release_leave_it_alone() {
    let mut rig = rig_or_skip!();
    let gq = go_queue(&rig);
    let member = seq_member("a", "t", 1);
    add_pending(&mut rig, &member, DEADLINE as f64).await;
    let owner = go::owner_token();
    assert!(
        gq.claim(&mut rig.raw, &member, "a\0t", &owner, common::T0_S + 30)
            .await
            .unwrap()
    );
    let claims = rig.store.claims(QUEUE).await.unwrap();
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0].generation, Generation::new("a", "t"));
    assert_eq!(claims[0].owner, OwnerToken::new(owner));
    assert_eq!(
        claims[0].score,
        Score(go::score(&member)),
        "the member's own score"
    );
    // Our renew and release never touch it.
    let g = [Generation::new("a", "t")];
    let w = OwnerToken::new("w");
    let renewed = rig.store.renew(w.on(QUEUE), &g).await.unwrap();
    assert_eq!(renewed, vec![RenewOutcome::Lost]);
    let released = rig.store.release(w.on(QUEUE), &g).await;
    assert_eq!(released.unwrap(), vec![false]);
    assert_eq!(rig.store.depths(QUEUE).await.unwrap().claimed, 1);
}

/// One of ours claims a member with enqueue sequence `seq` as `owner`:
/// `(its score, the request, a whole second by which its lease has lapsed)`.
async fn ours_claimed(
    rig: &mut common::Rig,
    seq: i64,
    owner: &OwnerToken,
) -> (f64, ClaimRequest, i64) {
    let member = seq_member("a", "t", seq);
    let score = go::score(&member);
    add_pending(rig, &member, score).await;
    let r = request("a", "t", &member);
    let out = rig
        .store
        .claim(owner.on(QUEUE), std::slice::from_ref(&r))
        .await
        .unwrap();
    let ClaimOutcome::Claimed { lease_expiry, .. } = out[0] else {
        panic!("claimed: {out:?}")
    };
    let lapsed_s = i64::try_from(lease_expiry.0 / 1000).unwrap() + 1;
    (score, r, lapsed_s)
}

/// Our claim lapses and Go's reclaimer returns it: `(the score, the lapsed
/// owner, the request)`.
async fn ours_lapsed_and_returned_by_go(rig: &mut common::Rig) -> (f64, OwnerToken, ClaimRequest) {
    let slow = OwnerToken::new("slow");
    let (score, r, lapsed_s) = ours_claimed(rig, 2, &slow).await;
    assert_eq!(
        go_queue(rig).reclaim(&mut rig.raw, lapsed_s).await.unwrap(),
        1
    );
    (score, slow, r)
}

#[tokio::test]
async fn our_late_ack_is_suppressed_while_go_holds_the_generation_and_after_go_answered_it() {
    let mut rig = rig_or_skip!();
    let gq = go_queue(&rig);
    let (score, slow, r) = ours_lapsed_and_returned_by_go(&mut rig).await;
    let go_owner = go::owner_token();
    let won = gq.claim(
        &mut rig.raw,
        r.member.as_bytes(),
        "a\0t",
        &go_owner,
        common::T0_S + 300,
    );
    assert!(won.await.unwrap());

    let late = rig
        .store
        .ack(slow.on(QUEUE), &[ack_item(&r, score, "late")])
        .await;
    assert!(!late.unwrap()[0].pushed, "Go holds it: Go answers");
    let record = go::record("a", "t", 200, "go");
    let list = rig.store.keys().list(LIST);
    assert!(
        gq.ack(&mut rig.raw, &list, "a\0t", &go_owner, &record)
            .await
            .unwrap()
    );
    let later = rig
        .store
        .ack(slow.on(QUEUE), &[ack_item(&r, score, "later")])
        .await;
    assert!(!later.unwrap()[0].pushed, "answered by Go, no marker");
    assert_eq!(results(&mut rig).await, vec![record]);
    let d = rig.store.depths(QUEUE).await.unwrap();
    assert_eq!((d.pending, d.claimed), (0, 0));
}

#[tokio::test]
async fn our_late_ack_of_a_generation_go_put_back_in_pending_answers_it_and_takes_the_copy() {
    let mut rig = rig_or_skip!();
    let gq = go_queue(&rig);
    let (score, slow, r) = ours_lapsed_and_returned_by_go(&mut rig).await;
    let late = rig
        .store
        .ack(slow.on(QUEUE), &[ack_item(&r, score, "late")])
        .await;
    assert!(late.unwrap()[0].pushed, "still ours to answer: pending");
    assert!(gq.peek(&mut rig.raw, 10).await.unwrap().is_empty());
    assert_eq!(results(&mut rig).await.len(), 1);
}

#[tokio::test]
async fn a_promoted_retry_returns_at_gos_score_for_its_enqueue_sequence() {
    let mut rig = rig_or_skip!();
    let member = seq_member("a", "t", 9);
    let score = go::score(&member);
    assert_eq!(score, DEADLINE as f64 + 9.0 / f64::from(1 << 21));
    add_pending(&mut rig, &member, score).await;
    let r = request("a", "t", &member);
    let w = OwnerToken::new("w");
    let out = rig.store.claim(w.on(QUEUE), std::slice::from_ref(&r)).await;
    assert!(matches!(out.unwrap()[0], ClaimOutcome::Claimed { .. }));
    let stamped = claim_core::wire::stamp_retry(&member, QUEUE).expect("stamp");
    let park = claim_core::store::ParkItem {
        generation: r.generation.clone(),
        member: Member::from(stamped.clone()),
        due: common::T0.plus(1000),
    };
    assert_eq!(
        rig.store.park_retry(w.on(QUEUE), &[park]).await.unwrap(),
        vec![true]
    );
    rig.clock.advance(2000);
    assert_eq!(rig.store.promote_due(10).await.unwrap(), 1);
    assert_eq!(pending(&mut rig).await, vec![(stamped, score)]);
}

#[tokio::test]
async fn lapsed_go_claims_return_at_the_score_go_gives_every_sequence_shape() {
    let mut rig = rig_or_skip!();
    let gq = go_queue(&rig);
    let plain = String::from_utf8(common::member("none", "t", DEADLINE)).unwrap();
    let string_deadline = plain.replace("\"none\"", "\"text\"").replace(
        &format!("\"deadline\":{DEADLINE}"),
        &format!("\"deadline\":\"{DEADLINE}\""),
    );
    let cases: Vec<(&str, Vec<u8>, f64)> = vec![
        ("none", plain.into_bytes(), DEADLINE as f64),
        ("zero", seq_member("zero", "t", 0), DEADLINE as f64),
        ("negative", seq_member("negative", "t", -3), DEADLINE as f64),
        (
            "one",
            seq_member("one", "t", 1),
            claim_core::wire::queue_score(DEADLINE, Some(1)).0,
        ),
        (
            "capped",
            seq_member("capped", "t", (1 << 21) + 5),
            DEADLINE as f64 + f64::from((1 << 21) - 1) / f64::from(1 << 21),
        ),
        ("text", string_deadline.into_bytes(), 0.0),
    ];
    for (id, member, _) in &cases {
        add_pending(&mut rig, member, 1.0).await;
        let owner = go::owner_token();
        let key = Generation::new(*id, "t").claim_key();
        assert!(
            gq.claim(&mut rig.raw, member, &key, &owner, common::T0_S + 1)
                .await
                .unwrap()
        );
    }
    rig.clock.advance(2_000);
    let report = rig.store.reclaim_expired(QUEUE, 10).await.unwrap();
    assert_eq!((report.redelivered, report.dead_lettered), (cases.len(), 0));
    let back: std::collections::HashMap<Vec<u8>, f64> =
        pending(&mut rig).await.into_iter().collect();
    for (id, member, score) in cases {
        assert_eq!(back.get(&member), Some(&score), "{id}");
        assert_eq!(go::score(&member), score, "{id}: the stand-in agrees");
    }
}
