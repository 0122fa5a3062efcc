//! `trace_calls` (the transport config's `enable_tracing`): every Redis call of a store gets a `redis` span naming the script or command, the store operation and the queue, never a member or a record; without it no call makes a span.

mod common;

use claim_core::store::StoreConfig;
use claim_redis::testing::RedisServerOptions;
use claim_redis::{CALL_SPAN_TARGET, RedisStore, RedisStoreOptions};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

const DEADLINE: i64 = 4_000_000_000;

/// One span as the layer saw it: its name, target and fields.
#[derive(Debug, Clone, Default)]
struct Seen {
    name: &'static str,
    target: &'static str,
    fields: BTreeMap<String, String>,
}

/// Keeps every span created while it is the default subscriber.
#[derive(Debug, Clone, Default)]
struct Spans(Arc<Mutex<BTreeMap<u64, Seen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
}

impl<S: tracing::Subscriber> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut seen = Seen {
            name: attrs.metadata().name(),
            target: attrs.metadata().target(),
            ..Seen::default()
        };
        attrs.record(&mut Fields(&mut seen.fields));
        self.0.lock().unwrap().insert(id.into_u64(), seen);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        if let Some(seen) = self.0.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut seen.fields));
        }
    }
}

impl Spans {
    fn all(&self) -> Vec<Seen> {
        self.0.lock().unwrap().values().cloned().collect()
    }
}

/// One round trip (submit, claim, ack, read back) on a store with
/// `trace_calls` as given; the spans it made.
async fn round_trip_spans(trace_calls: bool) -> Option<Vec<Seen>> {
    let server = common::server(RedisServerOptions::default())?;
    let spans = Spans::default();
    let _default =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let options = RedisStoreOptions {
        key_prefix: claim_redis::testing::random_prefix(),
        trace_calls,
        ..RedisStoreOptions::new(server.url(), StoreConfig::default())
    };
    let store = RedisStore::connect(options).await.expect("connect");
    common::round::round_trip(&store, "q", "results", "a", DEADLINE)
        .await
        .unwrap();
    Some(spans.all())
}

#[tokio::test]
async fn with_trace_calls_each_redis_call_gets_a_redis_span_with_its_operation_and_queue() {
    let Some(spans) = round_trip_spans(true).await else {
        return;
    };
    assert!(!spans.is_empty(), "no span");
    for span in &spans {
        assert_eq!((span.name, span.target), ("redis", CALL_SPAN_TARGET));
        assert_eq!(span.fields["db.system"], "redis", "{span:?}");
        for value in span.fields.values() {
            assert!(
                !value.contains("done"),
                "a span carries the record: {span:?}"
            );
        }
    }
    let op = |name: &str| spans.iter().find(|s| s.fields["db.operation"] == name);
    let claim = op("claim").unwrap_or_else(|| panic!("no claim script span: {spans:#?}"));
    assert_eq!(claim.fields["store.op"], "claim");
    assert_eq!(claim.fields.get("queue").map(String::as_str), Some("q"));
    let ack = spans
        .iter()
        .find(|s| s.fields["store.op"] == "ack")
        .unwrap_or_else(|| panic!("no ack span: {spans:#?}"));
    assert_eq!(ack.fields.get("queue").map(String::as_str), Some("q"));
    // The Go producer's transaction, as the submit sends it.
    assert!(
        op("MULTI DEL SET ZADD").is_some(),
        "no submit span: {spans:#?}"
    );
}

#[tokio::test]
async fn without_trace_calls_no_redis_call_makes_a_span() {
    let Some(spans) = round_trip_spans(false).await else {
        return;
    };
    assert!(spans.is_empty(), "{spans:#?}");
}
