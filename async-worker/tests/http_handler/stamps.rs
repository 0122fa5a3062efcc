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

/// What the gateway saw of `request` sent under the policy `policy`.
async fn seen_under(policy: &str, request: &async_worker::Request) -> Seen {
    let (addr, log) = gateway().await;
    let policy = MergePolicy::from_json(policy).unwrap();
    let h = handler(addr, None).with_policy(&policy).unwrap();
    handle(&h, request).await;
    last_seen(&log)
}

#[tokio::test]
async fn a_policy_with_an_empty_fairness_header_sends_the_members_header_untouched() {
    let policy = r#"{"type":"random-robin","parameters":{"fairness_header":""}}"#;
    let seen = seen_under(policy, &with_metadata(r#"{"userid":"alice"}"#)).await;
    assert_eq!(
        header(&seen, "x-llm-d-inference-fairness-id"),
        vec!["spoofed"]
    );
}

#[tokio::test]
async fn tier_priority_sends_the_lane_as_priority_and_the_lanes_objective() {
    let policy = r#"{"type":"tier-priority","parameters":{"lane_objectives":{"overflow-batch":"cheap-batch"}}}"#;
    // No classification and no tier: the last lane, overflow-batch.
    let seen = seen_under(policy, &simple("/v1/completions")).await;
    assert_eq!(header(&seen, "x-gateway-priority"), vec!["5"]);
    assert_eq!(
        header(&seen, "x-llm-d-inference-objective"),
        vec!["cheap-batch"]
    );
}

#[tokio::test]
async fn a_gcs_uri_request_reaches_the_gateway_as_form_data_and_an_expiring_one_is_invalid() {
    use async_worker::transform::Transforms;
    let (addr, log) = gateway().await;
    let transforms = Transforms::from_json(
        r#"{"requestTransforms":[{"name":"audio","type":"gcs_uri_multipart","parameters":{"providers":["vertex"]}}]}"#,
    )
    .unwrap();
    let h = handler(addr, None).with_transforms(transforms);
    let owned = |uri: &str| {
        request(
            r#","metadata":{"provider":"vertex"}"#,
            &format!(r#"{{"gcs_uri":"{uri}","model":"whisper"}}"#),
            Duration::from_secs(3600),
        )
    };
    let outcome = handle(&h, &owned("gs://bucket/clip.wav")).await;
    assert!(
        matches!(outcome, HandlerOutcome::Success { .. }),
        "{outcome:?}"
    );
    let seen = last_seen(&log);
    let content_type = header(&seen, "content-type");
    assert!(
        content_type[0].starts_with("multipart/form-data; boundary="),
        "{content_type:?}"
    );
    let body = String::from_utf8(seen.body.clone()).unwrap();
    assert!(
        body.contains("gs://bucket/clip.wav") && body.contains("whisper"),
        "{body}"
    );

    let expired =
        "https://storage.googleapis.com/b/o?X-Goog-Date=20200101T000000Z&X-Goog-Expires=60";
    match handle(&h, &owned(expired)).await {
        HandlerOutcome::Error { code, message, .. } => {
            assert_eq!(code, async_worker::prelude::ErrorCode::InvalidRequest);
            assert!(message.starts_with("Failed to validate request for transform: transform audio/gcs_uri_multipart: INVALID_REQ: "), "{message}");
        }
        other => panic!("expected INVALID_REQUEST, got {other:?}"),
    }
}

#[tokio::test]
async fn the_trace_context_in_the_metadata_reaches_the_gateway_unchanged() {
    let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let metadata = format!(r#"{{"traceparent":"{parent}","tracestate":"congo=t61rcWkgMzE"}}"#);
    let r = request(
        &format!(r#","metadata":{metadata},"headers":{{"Traceparent":"00-spoofed"}}"#),
        r#"{"prompt":"x"}"#,
        Duration::from_secs(3600),
    );
    let (_, log) = outcome_of(&r).await;
    let seen = last_seen(&log);
    assert_eq!(header(&seen, "traceparent"), vec![parent]);
    assert_eq!(header(&seen, "tracestate"), vec!["congo=t61rcWkgMzE"]);
}

#[tokio::test]
async fn a_malformed_trace_context_is_not_sent_and_the_call_still_goes_out() {
    let r = request(
        r#","metadata":{"traceparent":"00-zz","tracestate":"a=1"}"#,
        r#"{"prompt":"x"}"#,
        Duration::from_secs(3600),
    );
    let (outcome, log) = outcome_of(&r).await;
    assert!(
        matches!(outcome, async_worker::HandlerOutcome::Success { .. }),
        "{outcome:?}"
    );
    let seen = last_seen(&log);
    assert!(header(&seen, "traceparent").is_empty());
    assert!(header(&seen, "tracestate").is_empty());
}
