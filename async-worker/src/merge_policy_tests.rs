//! Tests of the merge policy file and the tier-priority lanes.

use super::*;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn tier_priority(text: &str) -> TierPriority {
    match MergePolicy::from_json(text).unwrap() {
        MergePolicy::TierPriority(tier) => tier,
        other => panic!("not tier-priority: {other:?}"),
    }
}

#[test]
fn no_file_is_random_robin_with_go_s_fairness_default() {
    let policy = MergePolicy::default();
    assert!(matches!(policy, MergePolicy::RandomRobin { .. }));
    assert_eq!(policy.fairness().header, None);
}

#[test]
fn unknown_keys_and_types_are_refused_with_go_s_text() {
    let unknown_key = MergePolicy::from_json(r#"{"type":"random-robin","extra":1}"#).unwrap_err();
    assert!(
        unknown_key.starts_with("failed to unmarshal merge policy config: unknown field `extra`"),
        "{unknown_key}"
    );
    assert_eq!(
        MergePolicy::from_json(r#"{"type":"round-robin"}"#).unwrap_err(),
        "unknown request merge policy type: round-robin"
    );
}

#[test]
fn tier_priority_defaults_are_go_s() {
    let tier = tier_priority(r#"{"type":"tier-priority"}"#);
    assert_eq!(tier.priority_header.as_deref(), Some(PRIORITY_HEADER));
    assert_eq!(
        tier.objective_header.as_deref(),
        Some(LANE_OBJECTIVE_HEADER)
    );
    assert_eq!(tier.tier_label, "tier");
    assert!(tier.lane_objectives.is_empty());
}

#[test]
fn lanes_order_reserved_before_overflow_and_interactive_before_async_before_batch() {
    let tier = tier_priority(r#"{"type":"tier-priority"}"#);
    let cases = [
        (
            labels(&[("classification", "reserved"), ("tier", "interactive")]),
            0,
        ),
        (
            labels(&[("classification", "reserved"), ("tier", "async")]),
            1,
        ),
        (labels(&[("classification", "reserved")]), 2),
        (labels(&[("tier", "interactive")]), 3),
        (
            labels(&[("classification", "overflow"), ("tier", "async")]),
            4,
        ),
        (labels(&[("tier", "whatever")]), 5),
    ];
    for (labels, lane) in cases {
        assert_eq!(tier.lane(&labels), lane, "{labels:?}");
    }
}

#[test]
fn the_priority_header_carries_the_lane_and_a_configured_lane_sets_its_objective() {
    let tier = tier_priority(
        r#"{"type":"tier-priority","parameters":{"lane_objectives":{"overflow-batch":"cheap","reserved-interactive":""}}}"#,
    );
    assert_eq!(
        tier.headers(5),
        vec![
            (PRIORITY_HEADER, "5".to_owned()),
            (LANE_OBJECTIVE_HEADER, "cheap".to_owned())
        ]
    );
    assert_eq!(tier.headers(0), vec![(PRIORITY_HEADER, "0".to_owned())]);
}

#[test]
fn empty_header_names_send_nothing_and_illegal_ones_are_refused() {
    let tier = tier_priority(
        r#"{"type":"tier-priority","parameters":{"priority_header":"","objective_header":""}}"#,
    );
    assert!(tier.headers(2).is_empty());
    assert_eq!(
        MergePolicy::from_json(
            r#"{"type":"tier-priority","parameters":{"priority_header":"a b"}}"#
        )
        .unwrap_err(),
        "priority_header \"a b\" is not a legal HTTP header name"
    );
    assert_eq!(
        MergePolicy::from_json(r#"{"type":"random-robin","parameters":{"fairness_header":"x:y"}}"#)
            .unwrap_err(),
        "fairness_header \"x:y\" is not a legal HTTP header name"
    );
}

#[test]
fn fairness_params_pass_through_as_written() {
    let policy = MergePolicy::from_json(
        r#"{"type":"random-robin","parameters":{"fairness_header":"","fairness_attribute":"team"}}"#,
    )
    .unwrap();
    assert_eq!(policy.fairness().header.as_deref(), Some(""));
    assert_eq!(policy.fairness().attribute.as_deref(), Some("team"));
}
