//! The Go transport config: every field accepted, unknown fields warned about (or refused with --strict-config), Go's mode and URL rules.

use super::{
    GATEWAY, QUEUE, REDIS, assert_one_note, assert_says, config, config_refused, notes_about, ok,
    refused, resolve_env,
};
use crate::settings::RedisTls;
use claim_redis::Topology;

/// A config of `fields` (JSON members, without braces) plus one queue.
fn with_queue(fields: &str) -> String {
    format!(r#"{{{fields},"queues":[{QUEUE}]}}"#)
}

#[test]
fn every_go_transport_config_field_is_accepted() {
    let s = config(
        r#"{"url":"redis://cfg:6379/0","mode":"standalone","addrs":[],"master_name":"",
            "retry_queue_name":"retries","result_queue_name":"results",
            "poll_interval_ms":200,"batch_size":20,"enable_tracing":false,
            "claim_lease_ttl_seconds":60,"claim_reclaim_interval_ms":5000,
            "result_dedup_ttl_seconds":7200,"max_deliveries":3,
            "queues":[{"id":"a","queue_name":"qa","result_queue_name":"ra","result_ttl_seconds":3600,
                       "worker_pool_id":"default","inference_objective":"batch",
                       "request_path_url":"/v1/chat/completions","igw_base_url":"http://gw",
                       "gate_type":"none","gate_params":{"k":"v"},"labels":{"tier":"gold"}}]}"#,
    );
    assert_eq!(s.redis_url, "redis://cfg:6379/0");
    assert_eq!(s.store.retry_set, "retries");
    assert_eq!(s.store.default_result_list, "results");
    assert_eq!(s.runtime.batch_size, 20);
    assert_eq!(s.store.lease_ttl_ms, 60_000);
    assert_eq!(s.store.max_deliveries, 3);
    let spec = &s.runtime.queues[0];
    assert_eq!((spec.id.as_str(), spec.queue_name.as_str()), ("a", "qa"));
    assert_eq!(spec.result_queue_name.as_deref(), Some("ra"));
    assert_eq!(spec.result_ttl_seconds, Some(3600));
    assert_eq!(spec.pool_name, "default");
    assert!(s.notes.is_empty(), "{:#?}", s.notes);
}

#[test]
fn only_the_default_worker_pool_exists_and_result_ttl_defaults_to_none() {
    let s = config(
        r#"{"queues":[{"queue_name":"qa","igw_base_url":"http://gw","worker_pool_id":""},
                      {"queue_name":"qb","igw_base_url":"http://gw","result_ttl_seconds":0}]}"#,
    );
    assert_eq!(s.runtime.queues[0].pool_name, "default");
    assert_eq!(s.runtime.queues[1].pool_name, "default");
    assert_eq!(s.runtime.queues[0].result_ttl_seconds, None);
    assert_eq!(s.runtime.queues[1].result_ttl_seconds, None);
    // As Go without a pools file: any other pool is unknown.
    let m = config_refused(
        r#"{"queues":[{"queue_name":"qa","igw_base_url":"http://gw","worker_pool_id":"pool-1"}]}"#,
    );
    assert_says(
        &m,
        &["worker pool \"pool-1\" specified in queue config not found in pool configuration"],
    );
}

#[test]
fn a_negative_result_ttl_is_refused_naming_the_queue_field() {
    let m = config_refused(
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw","result_ttl_seconds":-5}]}"#,
    );
    assert_says(
        &m,
        &[
            "--transport-config",
            "queues[0].result_ttl_seconds: -5 is negative",
        ],
    );
}

#[test]
fn negative_numbers_are_refused_naming_the_field() {
    for field in [
        "poll_interval_ms",
        "batch_size",
        "claim_lease_ttl_seconds",
        "claim_reclaim_interval_ms",
        "result_dedup_ttl_seconds",
    ] {
        let m = config_refused(&with_queue(&format!(r#""{field}":-1"#)));
        assert_says(&m, &[&format!("{field}: -1 is negative")]);
    }
}

#[test]
fn an_unknown_field_at_any_level_is_a_warning_naming_its_path() {
    let s = config(
        r#"{"batchsize":5,"future_knob":{"x":1},
            "queues":[{"queue_name":"q","igw_base_url":"http://gw"},
                      {"queue_name":"r","igw_base_url":"http://gw","gate":"x"}]}"#,
    );
    assert_eq!(s.runtime.batch_size, 10, "the misspelt field is not used");
    for path in ["batchsize", "future_knob", "queues[1].gate"] {
        assert_one_note(
            &s,
            &format!("unknown field {path} "),
            &["is ignored", "--strict-config refuses it"],
        );
    }
    assert_eq!(s.notes.len(), 3, "{:#?}", s.notes);
}

#[test]
fn a_misspelt_field_is_ignored_with_a_warning_naming_the_field_it_was_meant_to_be() {
    let s = config(&with_queue(r#""claim_lease_ttl_secods":30"#));
    assert_eq!(
        s.store.lease_ttl_ms, 300_000,
        "the misspelt field is not used"
    );
    assert_one_note(
        &s,
        "unknown field claim_lease_ttl_secods ",
        &["did you mean `claim_lease_ttl_seconds`?", "is ignored"],
    );
    let s = config(
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw","gate_typ":"none","future_knob":1}]}"#,
    );
    assert_one_note(
        &s,
        "unknown field queues[0].gate_typ ",
        &["did you mean `queues[0].gate_type`?"],
    );
    let far = notes_about(&s, "unknown field queues[0].future_knob ");
    assert!(!far[0].contains("did you mean"), "nothing is near: {far:?}");
    let m = refused(&[
        "--strict-config",
        "--transport-config",
        &with_queue(r#""max_delivery":3"#),
    ]);
    assert_says(
        &m,
        &[
            "unknown field max_delivery",
            "did you mean `max_deliveries`?",
        ],
    );
}

#[test]
fn strict_config_refuses_an_unknown_field_naming_its_path() {
    let m = refused(&[
        "--strict-config",
        "--transport-config",
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw","gate":"x"}]}"#,
    ]);
    assert_says(
        &m,
        &[
            "--transport-config: unknown field queues[0].gate",
            "--strict-config",
            "remove it or correct its spelling",
        ],
    );
    let m = refused(&[
        "--strict-config",
        "--transport-config",
        &with_queue(r#""batchsize":5"#),
    ]);
    assert_says(&m, &["unknown field batchsize"]);
    // Known fields only: strict changes nothing.
    let s = ok(&[
        "--strict-config",
        "--transport-config",
        &with_queue(r#""batch_size":5"#),
    ]);
    assert_eq!(s.runtime.batch_size, 5);
}

#[test]
fn standalone_mode_refuses_addrs_and_master_name() {
    for mode in [r#""mode":"""#, r#""mode":"standalone""#] {
        let m = config_refused(&with_queue(&format!(r#"{mode},"addrs":["r2:6379"]"#)));
        assert_says(&m, &["addrs: is set in standalone mode"]);
        let m = config_refused(&with_queue(&format!(r#"{mode},"master_name":"mymaster""#)));
        assert_says(&m, &["master_name: is set in standalone mode"]);
    }
}

#[test]
fn cluster_mode_refuses_a_queue_name_whose_bookkeeping_cannot_share_its_slot() {
    let m = config_refused(
        r#"{"mode":"cluster","url":"redis://c:6379",
            "queues":[{"queue_name":"ok","igw_base_url":"http://gw"},{"queue_name":"a}b","igw_base_url":"http://gw"}]}"#,
    );
    assert_says(
        &m,
        &[
            "queues[1].queue_name",
            "queue \"a}b\"",
            "hash tag of its own",
        ],
    );
    // The same name is fine on one server, and a tagged name in cluster mode.
    config(
        r#"{"url":"redis://c:6379","queues":[{"queue_name":"a}b","igw_base_url":"http://gw"}]}"#,
    );
    config(
        r#"{"mode":"cluster","url":"redis://c:6379","queues":[{"queue_name":"{a}b","igw_base_url":"http://gw"}]}"#,
    );
}

#[test]
fn cluster_mode_refuses_master_name_and_a_db_other_than_zero() {
    let m = config_refused(&with_queue(r#""mode":"cluster","master_name":"m""#));
    assert_says(&m, &["master_name: is set in cluster mode"]);
    let m = config_refused(&with_queue(r#""mode":"cluster","url":"redis://c:6379/2""#));
    assert_says(&m, &["url: selects db 2", "Redis Cluster has only db 0"]);
}

#[test]
fn sentinel_mode_needs_master_name() {
    let m = config_refused(&with_queue(r#""mode":"sentinel","addrs":["s1:26379"]"#));
    assert_says(&m, &["master_name: is missing", "sentinel mode"]);
}

#[test]
fn a_mode_go_does_not_know_is_refused_listing_the_modes() {
    let m = config_refused(&with_queue(r#""mode":"replica""#));
    assert_says(
        &m,
        &[
            "mode: \"replica\" is not a mode",
            "\"cluster\" or \"sentinel\"",
        ],
    );
}

#[test]
fn cluster_and_sentinel_configs_map_addrs_and_master_name_onto_the_mode() {
    let s = config(&with_queue(
        r#""mode":"cluster","addrs":["c2:6379","c3:6379"],"url":"redis://c1:6379/0""#,
    ));
    assert_eq!(
        s.redis_mode,
        Topology::Cluster {
            seeds: vec!["c2:6379".into(), "c3:6379".into()]
        }
    );
    assert_eq!(s.redis_url, "redis://c1:6379/0");
    let s = config(&with_queue(
        r#""mode":"sentinel","addrs":["s2:26379"],"master_name":"mymaster""#,
    ));
    assert_eq!(
        s.redis_mode,
        Topology::Sentinel {
            sentinels: vec!["s2:26379".into()],
            master_name: "mymaster".into()
        }
    );
    assert_eq!(
        config(&with_queue(r#""mode":"""#)).redis_mode,
        Topology::Standalone
    );
}

#[test]
fn redis_tls_files_and_replica_acks_come_from_the_config_over_their_flags() {
    let json = with_queue(
        r#""url":"rediss://r:6380","replica_acks":2,"redis_tls_ca_file":"/etc/ca.pem",
           "redis_tls_cert_file":"/etc/c.pem","redis_tls_key_file":"/etc/c.key""#,
    );
    let s = ok(&["--transport-config", &json]);
    assert_eq!(s.replica_acks, 2);
    assert_eq!(
        s.redis_tls,
        RedisTls {
            ca_file: Some("/etc/ca.pem".into()),
            cert_file: Some("/etc/c.pem".into()),
            key_file: Some("/etc/c.key".into()),
        }
    );
    assert!(s.notes.is_empty(), "{:#?}", s.notes);
    let s = ok(&["--transport-config", &json, "--replica-acks", "1"]);
    assert_eq!(s.replica_acks, 2);
    assert_one_note(&s, "--replica-acks 1", &["is ignored", "replica_acks to 2"]);
    let s = ok(&[
        "--transport-config",
        &with_queue(r#""url":"rediss://r:6380""#),
        "--redis-tls-ca-file",
        "/ca.pem",
        "--replica-acks",
        "1",
    ]);
    assert_eq!(
        s.redis_tls.ca_file.as_deref(),
        Some(std::path::Path::new("/ca.pem"))
    );
    assert_eq!(s.replica_acks, 1);
    assert_eq!(config(&with_queue("\"batch_size\":1")).replica_acks, 0);
}

#[test]
fn redis_tls_files_need_a_rediss_url_and_a_certificate_needs_its_key() {
    let m = refused(&[
        "--transport-config",
        &with_queue(r#""url":"redis://r:6379""#),
        "--redis-tls-ca-file",
        "/ca.pem",
    ]);
    assert_says(&m, &["--redis-tls-ca-file", "not rediss://"]);
    let m = config_refused(&with_queue(
        r#""url":"rediss://r:6380","redis_tls_cert_file":"/c.pem""#,
    ));
    assert_says(&m, &["--redis-tls-key-file", "give both files"]);
    let m = config_refused(&with_queue(r#""replica_acks":-1"#));
    assert_says(&m, &["replica_acks", "-1 is negative"]);
}

#[test]
fn the_config_url_wins_and_redis_url_fills_it_only_when_empty() {
    let s = config(&with_queue(r#""url":"redis://from-config:6379""#));
    assert_eq!(s.redis_url, "redis://from-config:6379");
    for empty in [r#""url":"""#, r#""url":null"#] {
        let s = config(&with_queue(empty));
        assert_eq!(s.redis_url, REDIS);
    }
}

#[test]
fn without_a_url_anywhere_the_error_is_gos() {
    let error = resolve_env(
        &["--transport-config", &format!(r#"{{"queues":[{QUEUE}]}}"#)],
        None,
    )
    .unwrap_err();
    assert_eq!(error.exit_code(), 2);
    assert!(
        error
            .to_string()
            .starts_with("url is required (set url in the transport config or REDIS_URL)"),
        "{error}"
    );
    let error = resolve_env(&["--igw-base-url", GATEWAY], None).unwrap_err();
    assert!(error.to_string().starts_with("url is required"), "{error}");
}

#[test]
fn go_enable_tracing_true_turns_the_redis_call_spans_on_and_false_or_absent_leaves_them_off() {
    let s = config(&with_queue(r#""enable_tracing":true"#));
    assert!(s.redis_tracing && s.redis_options().trace_calls);
    assert!(s.notes.is_empty(), "{:#?}", s.notes);
    for field in [r#""enable_tracing":false"#, r#""enable_tracing":null"#] {
        let s = config(&with_queue(field));
        assert!(!s.redis_options().trace_calls, "{field}");
        assert!(s.notes.is_empty(), "{:#?}", s.notes);
    }
    assert!(!config(&with_queue(r#""batch_size":10"#)).redis_tracing);
}

#[test]
fn allowed_result_lists_are_off_by_default_and_set_per_transport_and_per_queue_without_a_note() {
    let s = config(&with_queue(r#""url":"redis://cfg:6379""#));
    assert_eq!(s.store.allowed_result_lists, None, "off: Go parity");
    assert!(s.store.queue_allowed_result_lists.is_empty());
    let s = ok(&[
        "--strict-config",
        "--transport-config",
        r#"{"allowed_result_lists":["results","tenant-a:*"],
            "queues":[{"queue_name":"qa","igw_base_url":"http://gw","result_ttl_seconds":60},
                      {"queue_name":"qb","igw_base_url":"http://gw","allowed_result_lists":[]}]}"#,
    ]);
    let top = s.store.allowed_result_lists.as_ref().expect("set");
    assert_eq!(top.entries(), ["results", "tenant-a:*"]);
    assert!(top.allows("tenant-a:x") && !top.allows("tenant-b:x"));
    let qb = &s.store.queue_allowed_result_lists["qb"];
    assert!(
        qb.entries().is_empty(),
        "an empty one allows only the configured lists"
    );
    assert!(!s.store.queue_allowed_result_lists.contains_key("qa"));
    assert_eq!(s.store.queue_result_ttls.get("qa"), Some(&60));
    assert!(s.notes.is_empty(), "{:#?}", s.notes);
}

#[test]
fn an_allowed_result_lists_entry_with_an_inner_star_or_empty_is_refused_naming_the_field() {
    let m = config_refused(
        r#"{"queues":[{"queue_name":"qa","igw_base_url":"http://gw","allowed_result_lists":["a*b"]}]}"#,
    );
    assert_says(
        &m,
        &["queues[0].allowed_result_lists", "\"a*b\"", "trailing"],
    );
    let m = config_refused(&with_queue(r#""allowed_result_lists":[""]"#));
    assert_says(&m, &["allowed_result_lists", "empty"]);
    let m = config_refused(&with_queue(r#""allowed_result_lists":"results""#));
    assert_says(&m, &["allowed_result_lists", "list of list names"]);
}
