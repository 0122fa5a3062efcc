//! The terminal record in the result list (Go's `ResultMessage`) and its error codes.
//!
//! Every record names the generation it answers (`request_token`, left out
//! when the request had none): the durable Go consumer de-duplicates by id
//! and token, and parks a record whose token is not a string.

use std::collections::BTreeMap;
use std::{fmt, str::FromStr};

use serde::de;
use serde::{Deserialize, Serialize};

use super::go_json::{go_json, try_go_json};

/// Writes [`ErrorCode`], [`ErrorCode::ALL`] and [`ErrorCode::as_str`] from
/// one list of `Variant = "WIRE_NAME"`, so a code is named once.
macro_rules! error_codes {
    ($( $variant:ident = $name:literal, )*) => {
        /// Result-level error codes (`error_code`); all but `DELIVERY_LIMIT` come from Go.
        ///
        /// `PAYLOAD_UNAVAILABLE`: the request's payload was stored apart
        /// (`internal.payload_ref`) and the key was gone when it was fetched.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum ErrorCode {
            $( #[serde(rename = $name)] $variant, )*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: [ErrorCode; [$($name),*].len()] = [$(ErrorCode::$variant),*];

            /// The wire name, e.g. `DEADLINE_EXCEEDED`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( ErrorCode::$variant => $name, )*
                }
            }
        }
    };
}

error_codes! {
    DeadlineExceeded = "DEADLINE_EXCEEDED",
    Cancelled = "CANCELLED",
    GateDropped = "GATE_DROPPED",
    GateError = "GATE_ERROR",
    InferenceError = "INFERENCE_ERROR",
    InvalidRequest = "INVALID_REQUEST",
    PayloadUnavailable = "PAYLOAD_UNAVAILABLE",
    DeliveryLimit = "DELIVERY_LIMIT",
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not one of the [`ErrorCode`] wire names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown error code {0:?}: expected one of DEADLINE_EXCEEDED, CANCELLED, GATE_DROPPED, GATE_ERROR, INFERENCE_ERROR, INVALID_REQUEST, PAYLOAD_UNAVAILABLE, DELIVERY_LIMIT"
)]
pub struct UnknownErrorCode(pub String);

impl FromStr for ErrorCode {
    type Err = UnknownErrorCode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorCode::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownErrorCode(s.to_owned()))
    }
}

/// One terminal record in the result list, Go's `ResultMessage`.
///
/// `status_code` is set when an HTTP response arrived (`payload` is then its body);
/// otherwise `error_code`/`error_message` say why and `payload` is `{"error":<message>}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ResultRecord {
    pub id: String,
    #[serde(skip_serializing_if = "no_status")]
    pub status_code: Option<u16>,
    pub payload: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    #[serde(skip_serializing_if = "no_text")]
    pub error_message: Option<String>,
    /// The generation answered (`internal.request_token`); `None` or empty
    /// is left out, as Go's `omitempty` does.
    #[serde(skip_serializing_if = "no_text")]
    pub request_token: Option<String>,
}

/// Go's `error_message` for [`ErrorCode::PayloadUnavailable`] when the key was gone.
pub const PAYLOAD_MISSING_MESSAGE: &str = "request payload is missing";

fn no_status(s: &Option<u16>) -> bool {
    matches!(s, None | Some(0))
}

fn no_text(s: &Option<String>) -> bool {
    s.as_deref().is_none_or(str::is_empty)
}

#[derive(Deserialize)]
struct ResultIn {
    id: String,
    status_code: Option<u16>,
    payload: Option<String>,
    error_code: Option<String>,
    error_message: Option<String>,
    /// A string when present (`null` reads as absent): the durable Go
    /// consumer parks a record with any other type as unparsable.
    request_token: Option<String>,
}

impl ResultRecord {
    /// An HTTP response (any status) with its body, as Go's `NewHTTPResult`.
    pub fn success(id: impl Into<String>, status: u16, payload: impl Into<String>) -> Self {
        let status_code = Some(status).filter(|s| *s != 0);
        ResultRecord {
            id: id.into(),
            status_code,
            payload: payload.into(),
            ..ResultRecord::default()
        }
    }

    /// A failure without an HTTP response, as Go's `NewErrorResult`.
    pub fn error(id: impl Into<String>, code: ErrorCode, message: impl Into<String>) -> Self {
        let message = message.into();
        let payload = go_json(&BTreeMap::from([("error", message.as_str())]));
        ResultRecord {
            id: id.into(),
            payload: String::from_utf8(payload).expect("serde_json writes UTF-8"),
            error_code: Some(code),
            error_message: Some(message).filter(|m| !m.is_empty()),
            ..ResultRecord::default()
        }
    }

    /// The record answering generation `token` (empty: the request had none,
    /// and the field is left out).
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.request_token = Some(token.into()).filter(|t| !t.is_empty());
        self
    }

    /// The record as Go's `json.Marshal` writes it, byte for byte; should
    /// that fail, Go's fallback ([`ResultRecord::marshal_failed`]).
    pub fn to_json_bytes(&self) -> Vec<u8> {
        try_go_json(self).unwrap_or_else(|_| Self::marshal_failed(&self.id))
    }

    /// What Go pushes when a record cannot be marshalled:
    /// `{"id":"<id>","payload":"{\"error\":\"marshal failed\"}"}`. A
    /// `ResultRecord` always serializes (its fields are strings and
    /// numbers), so this is the contract, kept for a record type that could fail.
    pub fn marshal_failed(id: &str) -> Vec<u8> {
        // A sorted map writes `id` before `payload`, as Go's struct does.
        let payload = r#"{"error":"marshal failed"}"#;
        go_json(&BTreeMap::from([("id", id), ("payload", payload)]))
    }

    /// Reads a record as a Go consumer would: `id` required, absent fields empty.
    pub fn from_json(raw: &[u8]) -> Result<Self, serde_json::Error> {
        let r: ResultIn = serde_json::from_slice(raw)?;
        if r.id.is_empty() {
            return Err(de::Error::custom("result record has an empty id"));
        }
        let error_code = match r.error_code.filter(|c| !c.is_empty()) {
            Some(c) => Some(c.parse().map_err(de::Error::custom)?),
            None => None,
        };
        Ok(ResultRecord {
            id: r.id,
            status_code: r.status_code.filter(|s| *s != 0),
            payload: r.payload.unwrap_or_default(),
            error_code,
            error_message: r.error_message.filter(|m| !m.is_empty()),
            request_token: r.request_token.filter(|t| !t.is_empty()),
        })
    }
}
