//! One request through the whole protocol (submit, claim, ack, read the record back), for the topology tests.

use claim_core::store::{AckItem, ClaimOutcome, ClaimRequest};
use claim_core::{ClaimInspect, ClaimStore, Generation, Member, OwnerToken, StoreError};
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
        .claim(queue, &owner, std::slice::from_ref(&req))
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
        record: Member::from(record.clone().into_bytes()),
        payload_ref: None,
        result_ttl_seconds: 0,
    };
    let acked = store.ack(queue, &owner, &[item]).await?;
    assert!(acked[0].pushed, "{id}: {:?}", acked[0]);
    let results = store.results(list).await?;
    assert!(
        results.iter().any(|r| r.as_bytes() == record.as_bytes()),
        "{id}: record missing from {list}"
    );
    Ok(())
}
