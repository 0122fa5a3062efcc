//! The builder refuses what would never work or would split a generation's records over two lists, and takes routing from the store.

use super::*;
use claim_memory::MemoryStore;
use std::collections::BTreeMap;

fn answering() -> impl Handler {
    crate::handler_fn(
        |job: serde_json::Value, _cx: crate::JobContext| async move {
            Ok::<_, std::convert::Infallible>(job)
        },
    )
}

fn store_routing(queue: &str, list: &str, ttl: u64) -> Arc<MemoryStore> {
    Arc::new(MemoryStore::new(StoreConfig {
        queue_result_lists: BTreeMap::from([(queue.to_owned(), list.to_owned())]),
        queue_result_ttls: BTreeMap::from([(queue.to_owned(), ttl)]),
        ..StoreConfig::default()
    }))
}

fn plain_store() -> Arc<MemoryStore> {
    Arc::new(MemoryStore::new(StoreConfig::default()))
}

#[test]
fn zero_concurrency_is_refused_by_name_instead_of_waiting_forever() {
    let built = Runtime::builder(plain_store())
        .queue("q")
        .concurrency(0)
        .handler(answering())
        .build();
    let error = built.expect_err("concurrency 0 handles nothing");
    assert_eq!(
        error,
        BuildError::Zero {
            setting: "concurrency"
        }
    );
    assert_eq!(error.to_string(), "concurrency is 0: it must be at least 1");
}

#[test]
fn a_builder_without_queues_or_without_a_handler_says_which_is_missing() {
    let no_queue = Runtime::builder(plain_store()).handler(answering()).build();
    assert_eq!(no_queue.expect_err("no queue"), BuildError::NoQueues);
    let no_handler = Runtime::builder(plain_store()).queue("q").build();
    assert_eq!(no_handler.expect_err("no handler"), BuildError::NoHandler);
}

#[test]
fn a_queue_spec_naming_another_list_than_the_store_routes_by_is_refused() {
    let spec = QueueSpec {
        result_queue_name: Some("mine".into()),
        ..QueueSpec::new("q")
    };
    let built = Runtime::builder(store_routing("q", "theirs", 60))
        .queue(spec)
        .handler(answering())
        .build();
    let error = built.expect_err("two lists for one queue");
    assert!(
        matches!(&error, BuildError::RouteDisagrees { queue, setting: "result_queue_name", .. } if queue == "q"),
        "{error:?}"
    );
    assert!(error.to_string().contains("StoreConfig"), "{error}");
}

#[test]
fn a_queue_spec_naming_a_list_the_store_does_not_know_is_refused_too() {
    let spec = QueueSpec {
        result_ttl_seconds: Some(30),
        ..QueueSpec::new("q")
    };
    let built = Runtime::builder(plain_store())
        .queue(spec)
        .handler(answering())
        .build();
    assert!(matches!(
        built.expect_err("a TTL only the runtime knows"),
        BuildError::RouteDisagrees {
            setting: "result_ttl_seconds",
            ..
        }
    ));
}

#[test]
fn a_queue_spec_that_names_no_routing_takes_the_stores() {
    let runtime = Runtime::builder(store_routing("q", "theirs", 60))
        .queue("q")
        .handler(answering())
        .build()
        .expect("valid settings");
    let spec = &runtime.shared.config.queues[0];
    assert_eq!(spec.result_queue_name.as_deref(), Some("theirs"));
    assert_eq!(spec.result_ttl_seconds, Some(60));
}

#[test]
fn a_queue_spec_that_agrees_with_the_store_is_accepted_as_it_is() {
    let spec = QueueSpec {
        result_queue_name: Some("theirs".into()),
        result_ttl_seconds: Some(60),
        ..QueueSpec::new("q")
    };
    let runtime = Runtime::builder(store_routing("q", "theirs", 60))
        .queue(spec.clone())
        .handler(answering())
        .build()
        .expect("valid settings");
    assert_eq!(runtime.shared.config.queues, vec![spec]);
}
