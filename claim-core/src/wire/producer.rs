//! Building pending members in the Go producer's shape (`RedisSortedSetProducer.SubmitRequest`), for tests, the demo and producers.

use std::collections::BTreeMap;

use serde::Serialize;

use super::go_json::go_json;
use super::member::RequestKind;
use super::{DEFAULT_QUEUE, DEFAULT_RESULT_LIST};

/// Go's `InternalRouting`, for building members in the producer's shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct InternalRouting {
    #[serde(skip_serializing_if = "is_zero")]
    pub retry_count: u32,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub queue_id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub request_token: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub request_queue_name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub result_queue_name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub transport_correlation_id: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Go's `RedisRequest` (`RequestMessage` plus queue overrides), as `data`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RequestData {
    pub id: String,
    pub created: i64,
    pub deadline: i64,
    pub payload: serde_json::Value,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub endpoint: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub request_queue_name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub result_queue_name: String,
}

/// A pending member as the Go producer builds it; fields are public to vary it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Envelope {
    pub internal: InternalRouting,
    pub request_kind: RequestKind,
    pub data: RequestData,
}

impl Envelope {
    /// What `RedisSortedSetProducer.SubmitRequest` enqueues with the default
    /// queues: kind `redis`, token and both queue names in `internal`, `created` 0.
    pub fn new(
        id: impl Into<String>,
        token: impl Into<String>,
        deadline: i64,
        payload: serde_json::Value,
    ) -> Self {
        Envelope {
            internal: InternalRouting {
                request_token: token.into(),
                request_queue_name: DEFAULT_QUEUE.into(),
                result_queue_name: DEFAULT_RESULT_LIST.into(),
                ..InternalRouting::default()
            },
            request_kind: RequestKind::Redis,
            data: RequestData {
                id: id.into(),
                deadline,
                payload,
                ..RequestData::default()
            },
        }
    }

    /// The member bytes, as Go's `json.Marshal` writes them.
    pub fn to_bytes(&self) -> Vec<u8> {
        go_json(self)
    }
}
