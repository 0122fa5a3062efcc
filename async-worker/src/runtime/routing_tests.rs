//! The result-routing precedence table, row by row: poll-time stamping and the ack-time (a)/(b)/(c) choice, and `at_poll` against Go's two steps run as Go runs them.

use super::*;
use claim_core::routing::route;

const DEFAULT: &str = "result-list";

fn spec(list: Option<&str>, ttl: Option<u64>) -> QueueSpec {
    QueueSpec {
        result_queue_name: list.map(str::to_owned),
        result_ttl_seconds: ttl,
        ..QueueSpec::new("q")
    }
}

/// What a member says about its routing, owned, as Go's processor rewrites
/// it: the reference [`at_poll`] must agree with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct GoRouting {
    resolved: bool,
    queue_id: Option<String>,
    result_queue_name: Option<String>,
    result_ttl_seconds: u64,
}

impl GoRouting {
    /// Go's poll-time stamp by the queue `spec` polled: an empty `queue_id`
    /// becomes the spec's; unless resolved, a set spec `result_queue_name`
    /// overwrites the member's, the spec's TTL (none when unset) replaces
    /// the member's, and the routing is resolved.
    fn stamped(mut self, spec: &QueueSpec) -> Self {
        if self.queue_id.as_deref().is_none_or(str::is_empty) {
            self.queue_id = Some(spec.id.clone());
        }
        if !self.resolved {
            if let Some(list) = spec.result_queue_name.as_deref().filter(|l| !l.is_empty()) {
                self.result_queue_name = Some(list.to_owned());
            }
            self.result_ttl_seconds = spec.result_ttl_seconds.unwrap_or(0);
            self.resolved = true;
        }
        self
    }

    /// Go's ack-time choice: (a) resolved: the member's list and TTL;
    /// (b) unresolved with `config` (the queue config named by `queue_id`):
    /// the config's list, else the member's, and the config's TTL;
    /// (c) otherwise the member's list and no TTL. Each list falls back to
    /// `default_list`.
    fn destination(&self, config: Option<&QueueSpec>, default_list: &str) -> Destination {
        route(Some(self.route()), config.map(queue_route), default_list)
    }

    fn route(&self) -> MemberRoute<'_> {
        MemberRoute {
            resolved: self.resolved,
            result_queue_name: self.result_queue_name.as_deref(),
            result_ttl_seconds: self.result_ttl_seconds,
        }
    }
}

fn member(resolved: bool, list: Option<&str>, ttl: u64) -> GoRouting {
    GoRouting {
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
            at_poll(routing.route(), config, DEFAULT),
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
    let other = GoRouting {
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

#[test]
fn at_poll_answers_what_gos_stamp_at_poll_then_choice_at_ack_answer_for_every_member_and_config() {
    let lists = [None, Some(""), Some("mine"), Some("config-list")];
    let ttls = [None, Some(0), Some(60)];
    for resolved in [false, true] {
        for own in lists {
            for own_ttl in [0, 7] {
                for config_list in lists {
                    for config_ttl in ttls {
                        let routing = member(resolved, own, own_ttl);
                        let config = spec(config_list, config_ttl);
                        let go = routing.clone().stamped(&config);
                        assert_eq!(
                            at_poll(routing.route(), &config, DEFAULT),
                            go.destination(Some(&config), DEFAULT),
                            "{routing:?} polled from {config:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_destination_of_a_parsed_member_reads_its_internal_routing_fields() {
    let member = br#"{"internal":{"request_token":"t","result_queue_name":"mine","result_ttl_seconds":9,"result_routing_resolved":true},"request_kind":"redis","data":{"id":"r","deadline":4000000000,"payload":{}}}"#;
    let parsed = claim_core::wire::parse_member(member).expect("parses");
    assert_eq!(
        MemberRoute::of(&parsed),
        MemberRoute {
            resolved: true,
            result_queue_name: Some("mine"),
            result_ttl_seconds: 9,
        }
    );
    assert_eq!(
        at_poll(
            MemberRoute::of(&parsed),
            &spec(Some("config-list"), Some(60)),
            DEFAULT
        ),
        to("mine", Some(9))
    );
}
