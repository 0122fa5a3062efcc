//! The routing table row by row ((a) resolved, (b) unresolved with a queue config, (c) neither), the store's routing of the records it writes itself, and the allow-list patterns.

use super::*;
use crate::store::StoreConfig;
use crate::wire;

const DEFAULT: &str = "result-list";

fn member(resolved: bool, list: Option<&str>, ttl: u64) -> Option<MemberRoute<'_>> {
    Some(MemberRoute {
        resolved,
        result_queue_name: list,
        result_ttl_seconds: ttl,
    })
}

fn queue(list: Option<&str>, ttl: Option<u64>) -> Option<QueueRoute<'_>> {
    Some(QueueRoute {
        result_queue_name: list,
        result_ttl_seconds: ttl,
    })
}

fn to(list: &str, ttl: Option<u64>) -> Route {
    Route {
        list: list.to_owned(),
        ttl_seconds: ttl,
    }
}

#[test]
fn every_row_of_gos_routing_table_falls_back_to_the_default_list() {
    let config = queue(Some("config-list"), Some(60));
    let bare = queue(None, Some(60));
    let rows = [
        (member(true, Some("mine"), 7), config, to("mine", Some(7))),
        (member(true, None, 7), config, to(DEFAULT, Some(7))),
        (member(true, Some(""), 0), config, to(DEFAULT, None)),
        (
            member(false, Some("mine"), 7),
            config,
            to("config-list", Some(60)),
        ),
        (member(false, Some("mine"), 7), bare, to("mine", Some(60))),
        (member(false, None, 7), bare, to(DEFAULT, Some(60))),
        (member(false, Some("mine"), 7), None, to("mine", None)),
        (member(false, None, 7), None, to(DEFAULT, None)),
        (None, config, to("config-list", Some(60))),
        (None, None, to(DEFAULT, None)),
        (
            member(true, None, u64::MAX),
            None,
            to(DEFAULT, Some(MAX_RESULT_TTL_SECONDS)),
        ),
    ];
    for (i, (m, q, expected)) in rows.into_iter().enumerate() {
        assert_eq!(route(m, q, DEFAULT), expected, "row {i}: {m:?} {q:?}");
    }
}

#[test]
fn the_store_routes_a_resolved_member_without_a_list_to_the_default_not_the_queues_list() {
    let mut config = StoreConfig::default();
    config
        .queue_result_lists
        .insert("q".into(), "q-results".into());
    config.queue_result_ttls.insert("q".into(), 60);
    let env = |resolved: bool| {
        let mut e = wire::Envelope::new("i", "t", 100, serde_json::json!({}));
        e.internal.result_queue_name = String::new();
        e.internal.result_routing_resolved = resolved;
        e.internal.result_ttl_seconds = 9;
        wire::parse_member(e.submission().member.as_bytes()).unwrap()
    };
    let resolved = env(true);
    assert_eq!(
        config.route("q", Some(&resolved)),
        to(wire::DEFAULT_RESULT_LIST, Some(9))
    );
    let unresolved = env(false);
    assert_eq!(
        config.route("q", Some(&unresolved)),
        to("q-results", Some(60))
    );
    assert_eq!(config.route("q", None), to("q-results", Some(60)));
    assert_eq!(
        config.route("other", None),
        to(wire::DEFAULT_RESULT_LIST, None)
    );
}

#[test]
fn an_allow_list_takes_exact_names_and_trailing_star_prefixes_only() {
    let allow = AllowList::new(vec!["results".into(), "tenant-a:*".into()]).unwrap();
    assert!(allow.allows("results"));
    assert!(!allow.allows("results2"));
    assert!(allow.allows("tenant-a:"));
    assert!(allow.allows("tenant-a:jobs"));
    assert!(!allow.allows("tenant-b:jobs"));
    assert!(AllowList::new(vec!["*".into()]).unwrap().allows("anything"));
    let err = AllowList::new(vec!["a*b".into()]).unwrap_err();
    assert!(err.contains("a*b") && err.contains("trailing"), "{err}");
    let err = AllowList::new(vec![String::new()]).unwrap_err();
    assert!(err.contains("empty"), "{err}");
}
