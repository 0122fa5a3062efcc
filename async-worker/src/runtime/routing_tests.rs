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
fn a_resolved_member_keeps_its_own_list_and_ttl_whatever_the_queue_config_says() {
    let config = spec(Some("config-list"), Some(60));
    assert_eq!(
        at_poll(member(true, Some("mine"), 30), &config, DEFAULT),
        to("mine", Some(30))
    );
    assert_eq!(
        at_poll(member(true, Some("mine"), 0), &config, DEFAULT),
        to("mine", None)
    );
    assert_eq!(
        at_poll(member(true, None, 30), &config, DEFAULT),
        to(DEFAULT, Some(30)),
        "no list of its own: the transport default, not the config's"
    );
}

#[test]
fn an_unresolved_member_takes_a_set_config_list_and_the_config_ttl_at_poll() {
    let config = spec(Some("config-list"), Some(60));
    assert_eq!(
        at_poll(member(false, Some("mine"), 30), &config, DEFAULT),
        to("config-list", Some(60))
    );
    assert_eq!(
        at_poll(member(false, None, 0), &config, DEFAULT),
        to("config-list", Some(60))
    );
}

#[test]
fn an_unresolved_member_keeps_its_list_when_the_config_sets_none_but_takes_the_config_ttl() {
    assert_eq!(
        at_poll(
            member(false, Some("mine"), 30),
            &spec(None, Some(60)),
            DEFAULT
        ),
        to("mine", Some(60))
    );
    assert_eq!(
        at_poll(member(false, Some("mine"), 30), &spec(None, None), DEFAULT),
        to("mine", None),
        "the config's unset TTL replaces the member's"
    );
    assert_eq!(
        at_poll(member(false, Some(""), 30), &spec(Some(""), None), DEFAULT),
        to(DEFAULT, None),
        "empty names are unset: the transport default"
    );
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
