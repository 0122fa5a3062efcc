//! The result-routing precedence table, row by row: poll-time stamping and the ack-time (a)/(b)/(c) choice.

use super::*;

const DEFAULT: &str = "result-list";

fn spec(list: Option<&str>, ttl: Option<u64>) -> QueueSpec {
    QueueSpec {
        result_queue_name: list.map(str::to_owned),
        result_ttl_seconds: ttl,
        ..QueueSpec::new("q")
    }
}

fn member(resolved: bool, list: Option<&str>, ttl: u64) -> MemberRouting {
    MemberRouting {
        resolved,
        queue_id: None,
        result_queue_name: list.map(str::to_owned),
        result_ttl_seconds: ttl,
    }
}

fn to(list: &str, ttl: Option<u64>) -> Destination {
    Destination {
        list: list.to_owned(),
        ttl_seconds: ttl,
    }
}

#[test]
fn at_poll_a_resolved_member_keeps_its_routing_and_an_unresolved_one_takes_the_configs_list_and_ttl()
 {
    let config = spec(Some("config-list"), Some(60));
    let (ttl_only, unset, empty) = (spec(None, Some(60)), spec(None, None), spec(Some(""), None));
    let rows = [
        // A resolved member keeps its own list and TTL whatever the queue config says.
        (
            member(true, Some("mine"), 30),
            &config,
            to("mine", Some(30)),
        ),
        (member(true, Some("mine"), 0), &config, to("mine", None)),
        // No list of its own: the transport default, not the config's.
        (member(true, None, 30), &config, to(DEFAULT, Some(30))),
        // An unresolved member takes a set config list and the config TTL.
        (
            member(false, Some("mine"), 30),
            &config,
            to("config-list", Some(60)),
        ),
        (member(false, None, 0), &config, to("config-list", Some(60))),
        // It keeps its list when the config sets none, but takes the config's TTL...
        (
            member(false, Some("mine"), 30),
            &ttl_only,
            to("mine", Some(60)),
        ),
        // ...even an unset one, which replaces the member's.
        (member(false, Some("mine"), 30), &unset, to("mine", None)),
        // Empty names are unset: the transport default.
        (member(false, Some(""), 30), &empty, to(DEFAULT, None)),
    ];
    for (i, (routing, config, expected)) in rows.into_iter().enumerate() {
        assert_eq!(
            at_poll(routing.clone(), config, DEFAULT),
            expected,
            "row {i}: {routing:?}"
        );
    }
}

#[test]
fn stamping_fills_an_empty_queue_id_and_marks_the_routing_resolved() {
    let stamped = member(false, None, 0).stamped(&spec(None, Some(5)));
    assert_eq!(stamped.queue_id.as_deref(), Some("q"));
    assert!(stamped.resolved);
    assert_eq!(stamped.result_ttl_seconds, 5);
    let other = MemberRouting {
        queue_id: Some("other".into()),
        ..member(true, None, 0)
    };
    assert_eq!(
        other.stamped(&spec(None, None)).queue_id.as_deref(),
        Some("other")
    );
}

#[test]
fn at_ack_the_list_follows_rows_a_b_and_c_each_falling_back_to_the_default() {
    let config = spec(Some("config-list"), Some(60));
    let bare_config = spec(None, Some(60));
    let rows = [
        // (a) resolved: the member's list and TTL.
        (
            member(true, Some("mine"), 7),
            Some(&config),
            to("mine", Some(7)),
        ),
        (member(true, None, 7), Some(&config), to(DEFAULT, Some(7))),
        // (b) unresolved with a config: config list, then the member's; config TTL.
        (
            member(false, Some("mine"), 7),
            Some(&config),
            to("config-list", Some(60)),
        ),
        (
            member(false, Some("mine"), 7),
            Some(&bare_config),
            to("mine", Some(60)),
        ),
        (
            member(false, None, 7),
            Some(&bare_config),
            to(DEFAULT, Some(60)),
        ),
        // (c) unresolved, no config: the member's list, no TTL.
        (member(false, Some("mine"), 7), None, to("mine", None)),
        (member(false, None, 7), None, to(DEFAULT, None)),
    ];
    for (i, (routing, config, expected)) in rows.into_iter().enumerate() {
        assert_eq!(
            routing.destination(config, DEFAULT),
            expected,
            "row {i}: {routing:?}"
        );
    }
}
