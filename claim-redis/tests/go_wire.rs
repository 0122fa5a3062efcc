//! Wire compatibility with the Go processor: raw Go-style producer and consumer around the store.

mod common;

use claim_core::store::{AckItem, ClaimOutcome, ClaimRequest};
use claim_core::unix_now;
use claim_core::wire::{self, ErrorCode, ResultRecord};
use claim_core::{ClaimStore, Generation, Member, OwnerToken, Score};
use redis::AsyncCommands;

const QUEUE: &str = "request-sortedset";
const RESULTS: &str = "result-list";

/// `RedisSortedSetProducer`: one MULTI per request.
async fn go_submit(
    go: &mut redis::aio::MultiplexedConnection,
    id: &str,
    token: &str,
    deadline: i64,
) {
    let ttl = deadline - unix_now();
    redis::pipe()
        .atomic()
        .del(format!("request-cancel:{id}"))
        .ignore()
        .cmd("SET")
        .arg(format!("request-active:{id}"))
        .arg(token)
        .arg("EX")
        .arg(ttl)
        .ignore()
        .zadd(QUEUE, common::member(id, token, deadline), deadline)
        .ignore()
        .query_async::<()>(go)
        .await
        .expect("Go-style submit");
}

/// Go's cancel: the active token becomes the cancel marker for 7 days.
async fn go_cancel(go: &mut redis::aio::MultiplexedConnection, id: &str) {
    let token: String = go
        .get(format!("request-active:{id}"))
        .await
        .expect("active token");
    let _: () = go
        .set_ex(format!("request-cancel:{id}"), token, 7 * 24 * 3600)
        .await
        .expect("Go-style cancel");
}

/// `BRPOP result-list`, as the Go consumer reads results.
async fn go_consume(go: &mut redis::aio::MultiplexedConnection) -> Vec<u8> {
    let popped: Option<(String, Vec<u8>)> = redis::cmd("BRPOP")
        .arg(RESULTS)
        .arg(1)
        .query_async(go)
        .await
        .expect("BRPOP");
    popped.expect("a record within 1 s").1
}

fn record(id: &str, code: Option<ErrorCode>) -> ResultRecord {
    match code {
        None => ResultRecord::success(id, 200, format!("{{\"text\":\"done {id}\"}}")),
        Some(code) => ResultRecord::error(id, code, format!("{id} ended with {code}")),
    }
}

#[tokio::test]
async fn go_submissions_are_claimed_acked_and_read_back_by_a_go_consumer_in_fifo_order() {
    let (_server, store, mut go) = or_skip!(common::production().await);
    let now = unix_now();
    let ids = ["req-0", "req-1", "req-2"];
    for (i, id) in ids.iter().enumerate() {
        go_submit(&mut go, id, &format!("tok-{i}"), now + 600 + i as i64).await;
    }
    go_cancel(&mut go, "req-1").await;

    let pending = store.peek(QUEUE, 0, 10).await.unwrap();
    let items: Vec<ClaimRequest> = pending
        .iter()
        .map(|e| {
            let p = wire::parse_member(e.member.as_bytes()).expect("Go member parses");
            ClaimRequest {
                member: e.member.clone(),
                generation: Generation::new(p.id, p.token),
            }
        })
        .collect();
    let order: Vec<&str> = items.iter().map(|i| i.generation.id.as_str()).collect();
    assert_eq!(order, ids, "earliest deadline first");
    let owner = OwnerToken::new("rust-worker");
    let claimed = store.claim(owner.on(QUEUE), &items).await.unwrap();
    let cancelled: Vec<bool> = claimed
        .iter()
        .map(|o| {
            matches!(
                o,
                ClaimOutcome::Claimed {
                    cancelled: true,
                    ..
                }
            )
        })
        .collect();
    assert_eq!(
        cancelled,
        vec![false, true, false],
        "only the Go-cancelled request"
    );
    let owners: usize = go.hlen("request-sortedset:claim-owners").await.unwrap();
    let index: usize = go.zcard("request-sortedset:claims-idx").await.unwrap();
    let members: usize = go.hlen("request-sortedset:claimed").await.unwrap();
    assert_eq!(
        (owners, index, members),
        (3, 3, 3),
        "the spec's bookkeeping key names"
    );

    let outcomes = [
        (2, Some(ErrorCode::InferenceError)),
        (0, None),
        (1, Some(ErrorCode::Cancelled)),
    ];
    let ack = |i: usize, code| AckItem {
        generation: items[i].generation.clone(),
        member: items[i].member.clone(),
        score: claimed_score(&claimed[i]),
        result_list: RESULTS.into(),
        record: claim_core::Record::from(record(ids[i], code).to_json_bytes()),
        payload_ref: None,
        result_ttl_seconds: 0,
    };
    store
        .ack(owner.on(QUEUE), &[ack(2, outcomes[0].1)])
        .await
        .unwrap();
    store
        .ack(owner.on(QUEUE), &[ack(0, None), ack(1, outcomes[2].1)])
        .await
        .unwrap();

    for (i, code) in outcomes {
        let raw = go_consume(&mut go).await;
        assert_eq!(
            raw,
            record(ids[i], code).to_json_bytes(),
            "pushed byte for byte, FIFO"
        );
        let v: serde_json::Value = serde_json::from_slice(&raw).unwrap();
        let fields: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        for f in &fields {
            assert!(
                [
                    "id",
                    "status_code",
                    "payload",
                    "error_code",
                    "error_message"
                ]
                .contains(f),
                "{f}"
            );
        }
        assert_eq!(v["id"], ids[i]);
        match code {
            None => assert_eq!(
                (v["status_code"].as_u64(), v.get("error_code")),
                (Some(200), None)
            ),
            Some(code) => {
                assert_eq!(v["error_code"], code.as_str());
                assert!(v["error_message"].as_str().unwrap().contains(ids[i]));
                assert!(v.get("status_code").is_none());
            }
        }
    }
    for id in ids {
        let active: bool = go.exists(format!("request-active:{id}")).await.unwrap();
        assert!(!active, "the ack cleared {id}'s active token");
    }
    let cancel: bool = go.exists("request-cancel:req-1").await.unwrap();
    assert!(
        !cancel,
        "the ack cleared the cancel marker holding its token"
    );
    let marker_ttl: i64 = go.pttl("result-terminal:5:req-0:tok-0").await.unwrap();
    assert!(
        marker_ttl > 21_000_000,
        "marker lives result_dedup_ttl: {marker_ttl} ms"
    );
    let left: usize = go.hlen("request-sortedset:claim-owners").await.unwrap();
    assert_eq!(left, 0);
}

#[tokio::test]
async fn a_go_resubmission_while_claimed_keeps_its_new_token_through_the_old_ack() {
    let (_server, store, mut go) = or_skip!(common::production().await);
    let deadline = unix_now() + 600;
    go_submit(&mut go, "req", "old", deadline).await;
    let old = ClaimRequest {
        member: Member::from(common::member("req", "old", deadline)),
        generation: Generation::new("req", "old"),
    };
    let owner = OwnerToken::new("w");
    store
        .claim(owner.on(QUEUE), std::slice::from_ref(&old))
        .await
        .unwrap();
    go_submit(&mut go, "req", "new", deadline + 1).await;
    let item = AckItem {
        generation: old.generation.clone(),
        member: old.member.clone(),
        score: Score(deadline as f64),
        result_list: RESULTS.into(),
        record: claim_core::Record::from(record("req", None).to_json_bytes()),
        payload_ref: None,
        result_ttl_seconds: 0,
    };
    store.ack(owner.on(QUEUE), &[item]).await.unwrap();
    let active: Option<String> = go.get("request-active:req").await.unwrap();
    assert_eq!(
        active.as_deref(),
        Some("new"),
        "only the acked generation's token is cleared"
    );
    go_cancel(&mut go, "req").await;
    let new = Generation::new("req", "new");
    assert_eq!(
        store.cancelled(&[old.generation, new]).await.unwrap(),
        vec![false, true]
    );
}

/// The pending score a claim answered.
fn claimed_score(outcome: &ClaimOutcome) -> Score {
    match outcome {
        ClaimOutcome::Claimed { score, .. } => *score,
        other => panic!("expected a claim, got {other:?}"),
    }
}
