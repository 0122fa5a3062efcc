//! What the merge policy stamps on a gateway call: the fairness id (on by default) and tier-priority's lane headers, after the member's own headers.

use super::support::*;
use async_worker::merge_policy::MergePolicy;
use std::time::Duration;

fn header<'a>(seen: &'a Seen, name: &str) -> Vec<&'a str> {
    seen.headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
        .collect()
}

/// A request with this `data.metadata` whose own headers try to set the fairness id.
fn with_metadata(metadata: &str) -> async_worker::Request {
    request(
        &format!(
            r#","metadata":{metadata},"headers":{{"X-LLM-D-Inference-Fairness-Id":"spoofed"}}"#
        ),
        r#"{"prompt":"x"}"#,
        Duration::from_secs(3600),
    )
}

#[tokio::test]
async fn the_userid_is_stamped_as_the_fairness_id_by_default_over_the_members_own_header() {
    let (outcome, log) = outcome_of(&with_metadata(r#"{"userid":"alice"}"#)).await;
    assert!(
        matches!(outcome, async_worker::HandlerOutcome::Success { .. }),
        "{outcome:?}"
    );
    let seen = last_seen(&log);
    assert_eq!(
        header(&seen, "x-llm-d-inference-fairness-id"),
        vec!["alice"]
    );
}

#[tokio::test]
async fn a_policy_with_an_empty_fairness_header_sends_the_members_header_untouched() {
    let (addr, log) = gateway().await;
    let policy =
        MergePolicy::from_json(r#"{"type":"random-robin","parameters":{"fairness_header":""}}"#)
            .unwrap();
    let h = handler(addr, None).with_policy(&policy).unwrap();
    handle(&h, &with_metadata(r#"{"userid":"alice"}"#)).await;
    let seen = last_seen(&log);
    assert_eq!(
        header(&seen, "x-llm-d-inference-fairness-id"),
        vec!["spoofed"]
    );
}

#[tokio::test]
async fn tier_priority_sends_the_lane_as_priority_and_the_lanes_objective() {
    let (addr, log) = gateway().await;
    let policy = MergePolicy::from_json(
        r#"{"type":"tier-priority","parameters":{"lane_objectives":{"overflow-batch":"cheap-batch"}}}"#,
    )
    .unwrap();
    let h = handler(addr, None).with_policy(&policy).unwrap();
    // No classification and no tier: the last lane, overflow-batch.
    handle(&h, &simple("/v1/completions")).await;
    let seen = last_seen(&log);
    assert_eq!(header(&seen, "x-gateway-priority"), vec!["5"]);
    assert_eq!(
        header(&seen, "x-llm-d-inference-objective"),
        vec!["cheap-batch"]
    );
}
