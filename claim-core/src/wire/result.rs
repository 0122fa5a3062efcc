//! The terminal record in the result list (Go's `ResultMessage`) and its error codes.

use std::collections::BTreeMap;
use std::{fmt, str::FromStr};

use serde::de;
use serde::{Deserialize, Serialize};

use super::go_json::go_json;

/// Result-level error codes (`error_code`); all but `DELIVERY_LIMIT` come from Go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    DeadlineExceeded,
    Cancelled,
    GateDropped,
    GateError,
    InferenceError,
    InvalidRequest,
    DeliveryLimit,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 7] = [
        ErrorCode::DeadlineExceeded,
        ErrorCode::Cancelled,
        ErrorCode::GateDropped,
        ErrorCode::GateError,
        ErrorCode::InferenceError,
        ErrorCode::InvalidRequest,
        ErrorCode::DeliveryLimit,
    ];

    /// The wire name, e.g. `DEADLINE_EXCEEDED`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::DeadlineExceeded => "DEADLINE_EXCEEDED",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::GateDropped => "GATE_DROPPED",
            ErrorCode::GateError => "GATE_ERROR",
            ErrorCode::InferenceError => "INFERENCE_ERROR",
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::DeliveryLimit => "DELIVERY_LIMIT",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not one of the [`ErrorCode`] wire names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown error code {0:?}: expected one of DEADLINE_EXCEEDED, CANCELLED, GATE_DROPPED, GATE_ERROR, INFERENCE_ERROR, INVALID_REQUEST, DELIVERY_LIMIT"
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResultRecord {
    pub id: String,
    #[serde(skip_serializing_if = "no_status")]
    pub status_code: Option<u16>,
    pub payload: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    #[serde(skip_serializing_if = "no_text")]
    pub error_message: Option<String>,
}

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
}

impl ResultRecord {
    /// An HTTP response (any status) with its body, as Go's `NewHTTPResult`.
    pub fn success(id: impl Into<String>, status: u16, payload: impl Into<String>) -> Self {
        let status_code = Some(status).filter(|s| *s != 0);
        ResultRecord {
            id: id.into(),
            status_code,
            payload: payload.into(),
            error_code: None,
            error_message: None,
        }
    }

    /// A failure without an HTTP response, as Go's `NewErrorResult`.
    pub fn error(id: impl Into<String>, code: ErrorCode, message: impl Into<String>) -> Self {
        let message = message.into();
        let payload = go_json(&BTreeMap::from([("error", message.as_str())]));
        ResultRecord {
            id: id.into(),
            status_code: None,
            payload: String::from_utf8(payload).expect("serde_json writes UTF-8"),
            error_code: Some(code),
            error_message: Some(message).filter(|m| !m.is_empty()),
        }
    }

    /// The record as Go's `json.Marshal` writes it, byte for byte.
    pub fn to_json_bytes(&self) -> Vec<u8> {
        go_json(self)
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
        })
    }
}
