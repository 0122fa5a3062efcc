//! Building pending members in the Go producer's shape (`RedisSortedSetProducer.SubmitRequest`), for tests, the demo and producers.

use std::collections::BTreeMap;

use serde::Serialize;

use super::go_json::go_json;
use super::parsed::RequestKind;
use super::sequence::payload_key;
use super::{DEFAULT_QUEUE, DEFAULT_RESULT_LIST};
use crate::store::Submission;
use crate::stored::Payload;
use crate::types::{Generation, Member};

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
    #[serde(skip_serializing_if = "is_zero")]
    pub result_ttl_seconds: i64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub result_routing_resolved: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub transport_correlation_id: String,
    /// Stamped by the store's `enqueue`; 0 (omitted) until then.
    #[serde(skip_serializing_if = "is_zero")]
    pub enqueue_seq: i64,
    /// `request-payload:<id>:<token>` when the payload is stored apart.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub payload_ref: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
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

    /// The same request with its payload stored apart, as Go's producer
    /// writes it under `WithPayloadKeys`: `data.payload` becomes `null` and
    /// `internal.payload_ref` names `request-payload:<id>:<token>`. Returns
    /// the envelope and the payload bytes to store under that key (a `null`
    /// payload is stored empty, as Go stores it).
    pub fn by_reference(mut self) -> (Envelope, Vec<u8>) {
        let payload = std::mem::replace(&mut self.data.payload, serde_json::Value::Null);
        let bytes = if payload.is_null() {
            Vec::new()
        } else {
            go_json(&payload)
        };
        self.internal.payload_ref = payload_key(&self.data.id, &self.internal.request_token);
        (self, bytes)
    }

    /// What to hand a store's `submit` or `enqueue`: these bytes, their
    /// generation (`data.id`, `internal.request_token`) and deadline; no
    /// payload stored apart.
    pub fn submission(&self) -> Submission {
        Submission {
            member: Member::from(self.to_bytes()),
            generation: Generation::new(&self.data.id, &self.internal.request_token),
            deadline: self.data.deadline,
            payload: None,
        }
    }

    /// [`Envelope::by_reference`] as a submission: the member with
    /// `"payload":null` and `internal.payload_ref`, and the payload the
    /// store writes at that key.
    pub fn submission_by_reference(self) -> Submission {
        let (envelope, payload) = self.by_reference();
        Submission {
            payload: Some(Payload::from(payload)),
            ..envelope.submission()
        }
    }

    /// The member bytes, as Go's `json.Marshal` writes them.
    pub fn to_bytes(&self) -> Vec<u8> {
        go_json(self)
    }
}
