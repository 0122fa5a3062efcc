//! The fault wrapper's own promises, and the retrying client's, on the memory store.

use claim_conformance::retrying::Retrying;
use claim_conformance::unreliable::{Fault, FaultRates, Op, UnreliableStore};
use claim_core::store::{ClaimRequest, StoreConfig, Submission};
use claim_core::{
    ClaimInspect, ClaimProducer, ClaimStore, Generation, ManualClock, Millis, OwnerToken,
    StoreError,
};
use claim_memory::MemoryStore;

const Q: &str = "faults-queue";
const T0: Millis = Millis(1_700_000_000_000);

fn store() -> MemoryStore {
    MemoryStore::with_clock(StoreConfig::default(), ManualClock::new(T0))
}

fn submission(id: &str) -> Submission {
    let deadline = (T0.0 / 1000) as i64 + 3600;
    let member = format!(
        r#"{{"internal":{{"request_token":"t"}},"request_kind":"redis","data":{{"id":"{id}","deadline":{deadline},"payload":{{"prompt":"{id}"}}}}}}"#
    );
    Submission {
        member: member.as_str().into(),
        generation: Generation::new(id, "t"),
        deadline,
        payload: None,
    }
}

/// A fault-free wrapper holding one submission, whose next claim takes
/// effect but reports an indeterminate error.
async fn submitted_before_an_indeterminate_claim() -> (UnreliableStore<MemoryStore>, Submission) {
    let faulty = UnreliableStore::new(store(), 1, FaultRates::NONE);
    let s = submission("a");
    faulty.submit(Q, &s).await.unwrap();
    faulty.fail_next(Op::Claim, Fault::Indeterminate);
    (faulty, s)
}

fn claim_of(s: &Submission) -> ClaimRequest {
    ClaimRequest {
        member: s.member.clone(),
        generation: s.generation.clone(),
    }
}

#[tokio::test]
async fn a_determinate_fault_leaves_the_store_untouched() {
    let faulty = UnreliableStore::new(store(), 1, FaultRates::NONE);
    faulty.fail_next(Op::Submit, Fault::Determinate);
    let err = faulty.submit(Q, &submission("a")).await.unwrap_err();
    assert!(
        matches!(err, StoreError::Failed { op: Op::Submit, .. }),
        "{err}"
    );
    assert_eq!(faulty.inner().depths(Q).await.unwrap().pending, 0);
}

#[tokio::test]
async fn an_indeterminate_fault_takes_effect_but_reports_an_error() {
    let (faulty, s) = submitted_before_an_indeterminate_claim().await;
    let owner = OwnerToken::new("w");
    let err = faulty
        .claim(owner.on(Q), &[claim_of(&s)])
        .await
        .unwrap_err();
    assert!(err.may_have_happened(), "{err}");
    let claims = faulty.inner().claims(Q).await.unwrap();
    assert_eq!(claims.len(), 1, "the claim happened");
    assert_eq!(claims[0].owner, owner);
}

#[tokio::test]
async fn scripted_faults_hit_only_their_operation_and_only_once() {
    let faulty = UnreliableStore::new(store(), 1, FaultRates::NONE);
    faulty.fail_next(Op::Ack, Fault::Determinate);
    faulty.submit(Q, &submission("a")).await.unwrap();
    assert_eq!(faulty.scripted_pending(), 1, "submit is not ack");
    assert!(faulty.ack(OwnerToken::new("w").on(Q), &[]).await.is_err());
    assert!(faulty.ack(OwnerToken::new("w").on(Q), &[]).await.is_ok());
    assert_eq!(faulty.injected().determinate, 1);
}

#[tokio::test]
async fn the_same_seed_gives_the_same_faults_and_switched_off_gives_none() {
    let pattern = |seed| async move {
        let faulty = UnreliableStore::new(store(), seed, FaultRates::new(0.3, 0.3));
        let mut kinds = Vec::new();
        for _ in 0..200 {
            kinds.push(match faulty.depths(Q).await {
                Ok(_) => 'o',
                Err(e) if e.may_have_happened() => 'i',
                Err(_) => 'd',
            });
        }
        faulty.set_enabled(false);
        let mut off = true;
        for _ in 0..200 {
            off &= faulty.depths(Q).await.is_ok();
        }
        (String::from_iter(kinds), off)
    };
    let (a, off) = pattern(42).await;
    assert!(off, "a switched-off wrapper injects nothing");
    assert_eq!(a, pattern(42).await.0);
    assert_ne!(a, pattern(43).await.0);
    for kind in ['o', 'i', 'd'] {
        assert!(a.contains(kind), "{a}");
    }
}

#[tokio::test]
async fn the_retrying_client_reconciles_an_indeterminate_claim_instead_of_claiming_twice() {
    let (faulty, s) = submitted_before_an_indeterminate_claim().await;
    let client = Retrying::new(faulty);
    let out = client
        .claim(OwnerToken::new("w").on(Q), &[claim_of(&s)])
        .await
        .unwrap();
    assert!(
        matches!(out[0], claim_core::store::ClaimOutcome::Claimed { .. }),
        "{out:?}"
    );
    assert_eq!(client.stats().reconciled, 1);
}

#[tokio::test]
async fn random_faults_aimed_at_one_operation_spare_the_others() {
    let faulty = UnreliableStore::new(store(), 7, FaultRates::new(0.5, 0.5));
    faulty.set_only(Some(vec![Op::Ack]));
    for _ in 0..100 {
        faulty.depths(Q).await.expect("depths is spared");
    }
    let mut failed = 0;
    for _ in 0..100 {
        failed += usize::from(faulty.ack(OwnerToken::new("w").on(Q), &[]).await.is_err());
    }
    assert_eq!(failed, 100, "every ack fails at rates summing to 1");
}

#[tokio::test]
async fn a_reconciled_ack_reports_dead_lettered_even_when_the_same_bytes_were_dead_already() {
    let faulty = UnreliableStore::new(store(), 1, FaultRates::NONE);
    let s = submission("a");
    // The same bytes reach the dead set once (as unparsable, say), are
    // submitted again, and this time their ack meets an unusable list.
    faulty.submit(Q, &s).await.unwrap();
    assert!(faulty.dead_letter(Q, &s.member, "earlier").await.unwrap());
    faulty.submit(Q, &s).await.unwrap();
    let owner = OwnerToken::new("w");
    let claimed = faulty.claim(owner.on(Q), &[claim_of(&s)]).await.unwrap();
    let claim_core::store::ClaimOutcome::Claimed { score, .. } = claimed[0] else {
        panic!("claimed: {claimed:?}");
    };
    let item = claim_core::store::AckItem {
        generation: s.generation.clone(),
        member: s.member.clone(),
        score,
        // The queue itself: a list name the store refuses.
        result_list: Q.to_owned(),
        record: r#"{"id":"a","payload":"x"}"#.into(),
        payload_ref: None,
        result_ttl_seconds: 0,
    };
    faulty.fail_next(Op::Ack, Fault::Indeterminate);
    let client = Retrying::new(faulty);
    let out = client.ack(owner.on(Q), &[item]).await.unwrap();
    assert!(
        out[0].dead_lettered && out[0].claim_dropped && !out[0].pushed,
        "{out:?}"
    );
    assert_eq!(client.stats().reconciled, 1);
}
