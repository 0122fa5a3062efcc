//! The member parser's fast path: one pass over a member's bytes into the fields `parse_member` reads, for the common shape only; anything else is left to the full parser, which decides.
//!
//! The full parser ([`super::member`]) reads each object as its entries
//! with the values left raw, then reads `data` and `internal` again and
//! each field with a `serde_json` call of its own: about 1.1 µs for the
//! bench's 262-byte member (`cargo bench -p claim-core --bench
//! member_parse`), the worker's largest step per job. This reads the same
//! fields in one pass with `serde_json`'s derive.
//!
//! Why the answer is the same: the fast path answers only when it read the
//! member exactly as the full parser would, and `None` otherwise, and then
//! the full parser reads the member from scratch (so every error, and its
//! order, is the full parser's). Where the two could read one document
//! differently, the fast path refuses:
//! - a key that appears twice in one object (the full parser keeps the last,
//!   as Go does; the derive stops with "duplicate field");
//! - anything but an object where an object is read (the derive would read
//!   an array positionally; [`Object`] takes maps only);
//! - any field of the wrong type, a number out of its range, an empty or
//!   missing id, a `\0` in the id or token, a payload key not the member's
//!   own: each of these is an error or a dead letter, which the full parser
//!   words.
//!
//! What both read alike: keys decoded from their escapes, `null` read as
//! absent (except `data.payload`, where `null` is kept as the value),
//! unknown keys skipped after being checked as JSON, an empty string read
//! as absent.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Number;
use serde_json::value::RawValue;

use super::entries::{is_object, number_seconds};
use super::parsed::{
    CREATED_SECS, DEADLINE_SECS, MAX_RESULT_TTL_SECS, ParsedMember, RequestKind, own_payload_ref,
};

/// The member, or `None` when the full parser must read it.
pub(super) fn parse(text: &str) -> Option<ParsedMember> {
    let Object(top) = serde_json::from_str::<Object<Top>>(text).ok()?;
    let Object(data) = top.data?;
    let internal = top.internal.map(|Object(i)| i).unwrap_or_default();
    let id = data.id.filter(|id| !id.is_empty() && !id.contains('\0'))?;
    let token = internal.request_token.unwrap_or_default();
    if token.contains('\0') {
        return None;
    }
    let payload_ref = present(internal.payload_ref);
    own_payload_ref(&id, &token, payload_ref.as_deref()).ok()?;
    let payload = data.payload.0?;
    if !is_object(&payload) && payload.get() != "null" {
        return None;
    }
    let created = match data.created {
        Some(n) => Some(number_seconds(&n, CREATED_SECS)?).filter(|c| *c != 0),
        None => None,
    };
    let result_ttl_seconds = internal.result_ttl_seconds;
    if result_ttl_seconds.is_some_and(|t| t > MAX_RESULT_TTL_SECS) {
        return None;
    }
    Some(ParsedMember {
        id,
        token,
        deadline: number_seconds(&data.deadline?, DEADLINE_SECS)?,
        created,
        retry_count: internal.retry_count.unwrap_or(0),
        queue_id: present(internal.queue_id),
        request_queue_name: present(internal.request_queue_name),
        result_queue_name: present(internal.result_queue_name),
        result_ttl_seconds: result_ttl_seconds.filter(|t| *t != 0),
        result_routing_resolved: internal.result_routing_resolved.unwrap_or(false),
        transport_correlation_id: present(internal.transport_correlation_id),
        enqueue_seq: internal.enqueue_seq,
        payload_ref,
        labels: internal.labels.unwrap_or_default(),
        endpoint: present(data.endpoint),
        headers: data.headers.unwrap_or_default(),
        metadata: data.metadata.unwrap_or_default(),
        payload,
        request_kind: top.request_kind?,
    })
}

/// A string field as the full parser's `text` reads it: empty is absent.
fn present(text: Option<String>) -> Option<String> {
    text.filter(|t| !t.is_empty())
}

#[derive(Deserialize)]
struct Top {
    request_kind: Option<RequestKind>,
    data: Option<Object<Data>>,
    internal: Option<Object<Internal>>,
}

#[derive(Deserialize)]
struct Data {
    id: Option<String>,
    deadline: Option<Number>,
    created: Option<Number>,
    #[serde(default)]
    payload: Payload,
    endpoint: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    metadata: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize, Default)]
struct Internal {
    request_token: Option<String>,
    retry_count: Option<u32>,
    queue_id: Option<String>,
    request_queue_name: Option<String>,
    result_queue_name: Option<String>,
    result_ttl_seconds: Option<u64>,
    result_routing_resolved: Option<bool>,
    transport_correlation_id: Option<String>,
    enqueue_seq: Option<i64>,
    payload_ref: Option<String>,
    labels: Option<BTreeMap<String, String>>,
}

/// `data.payload` as written, `null` included (an `Option` field would
/// read `null` as absent); `None` only when the key is missing.
#[derive(Default)]
struct Payload(Option<Box<RawValue>>);

impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(|raw| Payload(Some(raw)))
    }
}

/// `T` read from a JSON object only: a derived struct also accepts an
/// array, field by field in order, which the full parser never does.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapOnly<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for MapOnly<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(Object)
            }
        }
        deserializer.deserialize_map(MapOnly(std::marker::PhantomData))
    }
}
