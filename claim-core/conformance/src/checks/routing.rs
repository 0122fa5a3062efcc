//! Checks of the routing of the records a store writes itself (one function with the runtime's, `claim_core::routing`) and of the optional result-list allow-list.
//!
//! Every record of a generation goes where [`claim_core::routing::route`] says,
//! whoever writes it: the store's `DELIVERY_LIMIT` record lands on the list
//! (and sets the list TTL) an ack of the runtime would use. With an
//! allow-list in force, a list outside it is refused by name: the member
//! is dead-lettered with the reason and no key of that name is written.

use super::StoreFactory;
use super::support::{Q, RESULTS, Req, fixture, ids_on, limited, limited_with_list, owner};
use claim_core::ListReads;
use claim_core::routing::AllowList;
use claim_core::store::StoreConfig;
use claim_core::types::Member;
use claim_core::{ClaimInspect, ClaimStore};

/// The queue's configured list in these checks.
const QUEUE_LIST: &str = "conformance-queue-results";

/// `r` with these `internal` routing fields set.
fn routed(mut r: Req, list: Option<&str>, resolved: bool, ttl: u64) -> Req {
    let mut value: serde_json::Value = serde_json::from_slice(r.member.as_bytes()).unwrap();
    if let Some(list) = list {
        value["internal"]["result_queue_name"] = list.into();
    }
    value["internal"]["result_routing_resolved"] = resolved.into();
    if ttl > 0 {
        value["internal"]["result_ttl_seconds"] = ttl.into();
    }
    r.member = Member::from(value.to_string().into_bytes());
    r
}

/// A one-delivery config whose queue has [`QUEUE_LIST`] and a 600 s TTL.
fn with_queue_list() -> StoreConfig {
    let mut cfg = limited_with_list(1, QUEUE_LIST);
    cfg.queue_result_ttls.insert(Q.to_owned(), 600);
    cfg
}

pub async fn a_resolved_member_without_a_list_gets_its_delivery_limit_record_on_the_default_list_as_its_answer(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, with_queue_list()).await;
    // Resolved, no list of its own, a TTL of its own: the runtime answers
    // it on the transport default with that TTL (Go's row (a)); so must
    // the store's own record.
    let r = routed(fx.req("resolved", "t", 3600), None, true, 120);
    let route = fx.store.config().route(
        Q,
        claim_core::wire::parse_member(r.member.as_bytes())
            .ok()
            .as_ref(),
    );
    assert_eq!(
        (route.list.as_str(), route.ttl_seconds),
        (RESULTS, Some(120))
    );
    fx.submit_and_claim("crasher", &r).await;
    assert_eq!(fx.reclaim_at(31).await.dead_lettered, 1);
    assert_eq!(ids_on(&fx.store, RESULTS).await, ["resolved"]);
    assert!(ids_on(&fx.store, QUEUE_LIST).await.is_empty());
    let ttl = fx.store.list_ttl(RESULTS).await.unwrap();
    assert!(ttl.is_some_and(|t| t > 0 && t <= 120), "list TTL {ttl:?}");
}

pub async fn an_unresolved_members_delivery_limit_record_sets_the_queues_list_ttl(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, with_queue_list()).await;
    let r = routed(fx.req("unresolved", "t", 3600), Some("own"), false, 5);
    fx.submit_and_claim("crasher", &r).await;
    assert_eq!(fx.reclaim_at(31).await.dead_lettered, 1);
    assert_eq!(ids_on(&fx.store, QUEUE_LIST).await, ["unresolved"]);
    let ttl = fx.store.list_ttl(QUEUE_LIST).await.unwrap();
    assert!(ttl.is_some_and(|t| t > 5 && t <= 600), "list TTL {ttl:?}");
}

/// A one-delivery config allowing `tenant-a:*` and the queue's own list.
fn allowing() -> StoreConfig {
    let mut cfg = limited(1);
    cfg.allowed_result_lists = Some(AllowList::new(vec!["tenant-a:*".into()]).unwrap());
    cfg
}

pub async fn an_ack_to_a_list_outside_the_allow_list_dead_letters_the_member_and_writes_no_key(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, allowing()).await;
    let [inside, outside, default] = ["in", "out", "default"].map(|id| fx.req(id, "t", 3600));
    for r in [&inside, &outside, &default] {
        fx.submit_and_claim("w", r).await;
    }
    let items = [
        inside.ack_item("tenant-a:results", "ok"),
        outside.ack_item("other-fleet-queue", "x"),
        default.ack_item(RESULTS, "ok"),
    ];
    let out = fx.store.ack(owner("w").on(Q), &items).await.unwrap();
    assert!(out[0].pushed && !out[0].dead_lettered, "{:?}", out[0]);
    assert!(
        !out[1].pushed && out[1].dead_lettered && out[1].claim_dropped,
        "{:?}",
        out[1]
    );
    assert!(
        out[2].pushed,
        "the default list is always allowed: {:?}",
        out[2]
    );
    assert_eq!(fx.store.list_len("other-fleet-queue").await.unwrap(), 0);
    assert!(!fx.store.is_terminal(&outside.generation).await.unwrap());
    let dead = fx.store.dead_entries(Q).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert!(
        dead[0]
            .reason
            .contains("\"other-fleet-queue\" is not allowed"),
        "{}",
        dead[0].reason
    );
}

pub async fn a_delivery_limit_record_for_a_list_outside_the_allow_list_is_not_written(
    f: &impl StoreFactory,
) {
    let mut cfg = allowing();
    // The queue's own allow-list replaces the transport's.
    cfg.queue_allowed_result_lists.insert(
        Q.to_owned(),
        AllowList::new(vec!["tenant-b:*".into()]).unwrap(),
    );
    let fx = fixture(f, cfg).await;
    let refused = routed(fx.req("refused", "t", 3600), Some("tenant-a:x"), true, 0);
    let allowed = routed(fx.req("allowed", "t", 3600), Some("tenant-b:x"), true, 0);
    fx.submit(&[refused.clone(), allowed.clone()]).await;
    fx.claim("crasher", &[refused.clone(), allowed]).await;
    assert_eq!(fx.reclaim_at(31).await.dead_lettered, 2);
    assert_eq!(ids_on(&fx.store, "tenant-b:x").await, ["allowed"]);
    assert_eq!(fx.store.list_len("tenant-a:x").await.unwrap(), 0);
    assert!(!fx.store.is_terminal(&refused.generation).await.unwrap());
    let dead = fx.store.dead_entries(Q).await.unwrap();
    let why: Vec<&str> = dead.iter().map(|d| d.reason.as_str()).collect();
    assert!(
        why.iter()
            .any(|w| w.contains("\"tenant-a:x\" is not allowed")),
        "{why:?}"
    );
}

pub async fn a_member_whose_list_ttl_is_beyond_ten_years_is_routed_as_unreadable_at_the_delivery_limit(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, with_queue_list()).await;
    // Above `wire::MAX_RESULT_TTL_SECS` the member does not parse (the
    // runtime answers it INVALID_REQUEST): its own routing is not trusted,
    // and its DELIVERY_LIMIT record takes the queue's list and TTL.
    let r = routed(fx.req("forever", "t", 3600), Some("own"), true, u64::MAX);
    fx.submit_and_claim("crasher", &r).await;
    assert_eq!(fx.reclaim_at(31).await.dead_lettered, 1);
    assert_eq!(ids_on(&fx.store, QUEUE_LIST).await, ["forever"]);
    assert_eq!(fx.store.list_len("own").await.unwrap(), 0);
    let ttl = fx.store.list_ttl(QUEUE_LIST).await.unwrap();
    assert!(ttl.is_some_and(|t| t > 540 && t <= 600), "list TTL {ttl:?}");
}

pub async fn an_ack_whose_list_ttl_is_beyond_any_expire_redis_takes_lands_once_with_the_ttl_clamped(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, limited(3)).await;
    let r = fx.req("forever", "t", 3600);
    fx.submit_and_claim("w", &r).await;
    let item = claim_core::store::AckItem {
        result_ttl_seconds: u64::MAX,
        ..r.ack_item(RESULTS, "ok")
    };
    for _ in 0..2 {
        fx.store
            .ack(owner("w").on(Q), std::slice::from_ref(&item))
            .await
            .unwrap();
    }
    assert_eq!(ids_on(&fx.store, RESULTS).await, ["forever"]);
    assert_eq!(fx.depths().await.claimed, 0);
    let ttl = fx.store.list_ttl(RESULTS).await.unwrap();
    let max = claim_core::routing::MAX_RESULT_TTL_SECONDS;
    assert!(
        ttl.is_some_and(|t| t > max - 60 && t <= max),
        "list TTL {ttl:?}"
    );
}

super::checks! {
    clocked:
        a_resolved_member_without_a_list_gets_its_delivery_limit_record_on_the_default_list_as_its_answer,
        an_unresolved_members_delivery_limit_record_sets_the_queues_list_ttl,
        an_ack_to_a_list_outside_the_allow_list_dead_letters_the_member_and_writes_no_key,
        a_delivery_limit_record_for_a_list_outside_the_allow_list_is_not_written,
        a_member_whose_list_ttl_is_beyond_ten_years_is_routed_as_unreadable_at_the_delivery_limit,
        an_ack_whose_list_ttl_is_beyond_any_expire_redis_takes_lands_once_with_the_ttl_clamped;
}
