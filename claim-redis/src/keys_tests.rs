//! Unit tests of the key layout: Go's names exactly in both layouts, and every hash-tagged key of a queue in the pending key's slot.

use super::*;

#[test]
fn production_keys_match_the_go_layout_exactly() {
    let keys = Keys::new("", "retry-sortedset");
    let q = keys.queue("request-sortedset");
    assert_eq!(q.pending, "request-sortedset");
    assert_eq!(q.claimed, "request-sortedset:claimed");
    assert_eq!(q.owners, "request-sortedset:claim-owners");
    assert_eq!(q.index, "request-sortedset:claims-idx");
    assert_eq!(q.dead, "request-sortedset:dead");
    assert_eq!(keys.retry(), "retry-sortedset");
    assert_eq!(keys.active("abc"), "request-active:abc");
    assert_eq!(keys.cancel("abc"), "request-cancel:abc");
    assert_eq!(keys.list("result-list"), "result-list");
    let g = Generation::new("a:b", "t");
    assert_eq!(keys.marker(&g), "result-terminal:3:a:b:t");
}

#[test]
fn keys_written_in_place_equal_the_keys_built_as_strings() {
    let keys = Keys::new("p:", "retry");
    let g = Generation::new("i:d", "t|k");
    assert_eq!(GenerationKey(&g).to_string(), g.key());
    assert_eq!(keys.marker(&g), format!("p:{MARKER_PREFIX}{}", g.key()));
    assert_eq!(keys.active("i:d"), format!("p:{}", wire::active_key("i:d")));
    assert_eq!(keys.cancel("i:d"), format!("p:{}", wire::cancel_key("i:d")));
}

#[test]
fn a_prefix_applies_to_every_key() {
    let keys = Keys::new("test:x:", "retry");
    let q = keys.queue("q");
    for key in [
        &q.pending,
        &q.claimed,
        &q.owners,
        &q.index,
        &q.deliveries,
        &q.dead,
    ] {
        assert!(key.starts_with("test:x:q"), "{key}");
    }
    assert_eq!(keys.retry(), "test:x:retry");
    assert!(keys.clock_side().starts_with("test:x:"));
    assert!(
        keys.marker(&Generation::new("i", "t"))
            .starts_with("test:x:result-terminal:")
    );
}

use crate::slots::hash_slot;

fn tagged(prefix: &str) -> Keys {
    Keys::with_layout(prefix, "retry-sortedset", KeyLayout::HashTagged)
}

fn slot(key: &str) -> u16 {
    hash_slot(key.as_bytes())
}

#[test]
fn the_plain_layout_is_the_default_and_parks_in_the_shared_retry_set() {
    let keys = Keys::new("", "retry-sortedset");
    assert_eq!(keys.layout(), KeyLayout::Plain);
    assert_eq!(KeyLayout::default(), KeyLayout::Plain);
    let q = keys.queue("jobs");
    assert_eq!(q.retry, "retry-sortedset");
    assert_eq!(q.paused, "jobs:paused");
    assert_eq!(keys.seq("jobs", 17), "request-seq:jobs:17");
    let g = Generation::new("a", "t");
    assert_eq!(keys.marker_for("elsewhere", &g), keys.marker(&g));
    assert_eq!(keys.clock_side_for("request-cancel:a"), keys.clock_side());
    assert_eq!(QueueKeys::new("", "jobs"), q);
}

#[test]
fn hash_tagged_keys_are_gos_cluster_names_exactly() {
    let keys = tagged("");
    let q = keys.queue("request-sortedset");
    let go = [
        ":claimed",
        ":claim-owners",
        ":claims-idx",
        ":deliveries",
        ":dead",
    ];
    let [pending, rest @ ..] = q.all();
    assert_eq!(pending, "request-sortedset");
    for (name, suffix) in rest.into_iter().zip(go) {
        assert_eq!(name, format!("{{request-sortedset}}{suffix}"));
    }
    assert_eq!(q.retry, "{request-sortedset}:retry");
    assert_eq!(q.paused, "{request-sortedset}:paused");
    assert_eq!(
        keys.seq("request-sortedset", 1700000000),
        "request-seq:{request-sortedset}:1700000000"
    );
    // Never tagged: the shared retry set, result lists and producer keys.
    assert_eq!(keys.retry(), "retry-sortedset");
    assert_eq!(keys.list("result-list"), "result-list");
    assert_eq!(keys.active("abc"), "request-active:abc");
    assert_eq!(keys.cancel("abc"), "request-cancel:abc");
    assert_eq!(
        keys.payload("request-payload:abc:t"),
        "request-payload:abc:t"
    );
}

#[test]
fn a_queue_name_that_holds_a_hash_tag_is_used_as_is() {
    let keys = tagged("");
    let q = keys.queue("{tenant}.jobs");
    assert_eq!(q.pending, "{tenant}.jobs");
    assert_eq!(q.claimed, "{tenant}.jobs:claimed");
    assert_eq!(q.retry, "{tenant}.jobs:retry");
    assert_eq!(keys.seq("{tenant}.jobs", 5), "request-seq:{tenant}.jobs:5");
    // An empty tag is no tag: the name gets a base of its own.
    assert_eq!(keys.queue("a{}b").claimed, "{a{}b}:claimed");
}

#[test]
fn every_hash_tagged_key_of_a_queue_lies_in_the_pending_keys_slot() {
    for prefix in ["", "test:x:"] {
        let keys = tagged(prefix);
        for name in ["request-sortedset", "q", "{tenant}.jobs", "a:b:c", "a{b"] {
            assert_eq!(keys.queue_refusal(name), None, "{name}");
            let q = keys.queue(name);
            let home = slot(&q.pending);
            for key in [
                &q.claimed,
                &q.owners,
                &q.index,
                &q.deliveries,
                &q.dead,
                &q.retry,
                &q.paused,
                &keys.seq(name, 1_700_000_000),
            ] {
                assert!(key.contains(prefix), "{key}");
                assert_eq!(
                    slot(key),
                    home,
                    "{key} of queue {name:?} (prefix {prefix:?})"
                );
            }
        }
    }
}

#[test]
fn a_hash_tagged_marker_lies_in_its_result_lists_slot() {
    let keys = tagged("test:x:");
    let g = Generation::new("i:d", "tok");
    for list in ["result-list", "{tenant}.results", "r"] {
        let list_key = keys.list(list);
        let marker = keys.marker_for(&list_key, &g);
        assert_eq!(slot(&marker), slot(&list_key), "{marker}");
        assert!(marker.starts_with("test:x:result-terminal:{"), "{marker}");
        assert!(marker.ends_with(":3:i:d:tok"), "{marker}");
        assert_eq!(keys.marker_key_for(&list_key, &g).to_string(), marker);
    }
    assert_eq!(
        tagged("").marker_for("result-list", &g),
        "result-terminal:{result-list}:3:i:d:tok"
    );
    assert_eq!(
        tagged("").marker_for("{t}.r", &g),
        "result-terminal:{t}:3:i:d:tok"
    );
}

#[test]
fn a_hash_tagged_side_hash_lies_in_its_keys_slot() {
    let keys = tagged("p:");
    for key in [
        keys.cancel("a"),
        keys.active("a"),
        keys.payload("request-payload:a:t"),
        keys.marker_for(&keys.list("results"), &Generation::new("a", "t")),
    ] {
        let side = keys.clock_side_for(&key);
        assert!(
            side.starts_with("p:claim-redis:explicit-time-expiry:{"),
            "{side}"
        );
        assert_eq!(slot(&side), slot(&key), "{side} for {key}");
    }
}

#[test]
fn a_queue_name_no_base_can_share_a_slot_with_is_refused_in_the_hash_tagged_layout() {
    for name in ["x}y", "a{}b", "{}x"] {
        let why = tagged("").queue_refusal(name).expect(name);
        assert!(why.contains(name) && why.contains("hash tag"), "{why}");
        assert_eq!(Keys::new("", "r").queue_refusal(name), None);
    }
}

/// Result list names whose own hash tag cannot sit between braces, and
/// other odd ones.
const NASTY_LISTS: [&str; 14] = [
    "a}b", "{}x", "x{y", "}{", "{a}}", "{}{a}", "{", "}", "{{}}", "{}", "}}{{", "x{}y{z}", "é}ü",
    "{t}.r",
];

#[test]
fn a_hash_tagged_marker_shares_its_lists_slot_for_every_list_name_and_prefix() {
    let ids = [
        Generation::new("i", "t"),
        Generation::new("{x}", "}{"),
        Generation::new("", ""),
    ];
    for prefix in ["", "test:x:", "p}"] {
        let keys = tagged(prefix);
        for list in NASTY_LISTS.into_iter().chain(["result-list", "r"]) {
            let list_key = keys.list(list);
            assert_eq!(keys.list_refusal(list), None, "{prefix:?} {list:?}");
            for g in &ids {
                let marker = keys.marker_for(&list_key, g);
                assert_eq!(
                    slot(&marker),
                    slot(&list_key),
                    "{marker:?} for {list_key:?}"
                );
                let side = keys.clock_side_for(&marker);
                assert_eq!(slot(&side), slot(&marker), "{side:?} for {marker:?}");
            }
        }
    }
    assert_eq!(
        tagged("").marker_for("result-list", &ids[0]),
        "result-terminal:{result-list}:1:i:t",
        "a name usable as a tag keeps today's marker"
    );
}

#[test]
fn a_list_whose_markers_cannot_share_its_slot_under_a_braced_prefix_is_refused_naming_it() {
    // A prefix opening a tag it never closes pulls every marker's tag
    // into the prefix: no marker form can follow the list then.
    let keys = tagged("t{x:");
    let why = keys.list_refusal("results").expect("refused");
    assert!(
        why.contains("\"results\"") && why.contains("prefix"),
        "{why}"
    );
    assert_eq!(Keys::new("t{x:", "r").list_refusal("results"), None);
}
