//! Wire format shared with the Go llm-d-async `redis-sortedset` transport.
//!
//! Pending members (parse, retry stamping, building), result records and key names.
//!
//! Decisions, where the Go code leaves room:
//! - `parse_member` reads routing from `internal` only, as the Go processor does
//!   (its producer copies `data.request_queue_name`/`result_queue_name` there).
//! - JSON `null`, an empty string, and `0` for `created`/`status_code` mean "unset", as in Go.
//! - `deadline`/`created` accept any JSON number; a fraction is floored to whole
//!   seconds (Go rejects it and drops the member). `deadline` must be at least 1.
//! - A missing or `null` payload is invalid (Go forwards `null` to the gateway).
//! - Keys match exactly; Go would also match `"ID"` to `id`.
//! - Members are written the way Go's `json.Marshal` writes them: struct field
//!   order, sorted map keys, and `<`, `>`, `&`, U+2028, U+2029 escaped.
//! - `stamp_retry` re-writes only the envelope and `internal` objects; every other
//!   value keeps its exact bytes (no numeric round trip), so no `arbitrary_precision`.

use std::collections::BTreeMap;
use std::{fmt, io, str::FromStr};

use serde::de::DeserializeOwned;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Number;
use serde_json::value::RawValue;

/// Pending sorted set the Go producer writes to by default.
pub const DEFAULT_QUEUE: &str = "request-sortedset";
/// Result list the Go processor pushes to when nothing else is configured.
pub const DEFAULT_RESULT_LIST: &str = "result-list";
/// Sorted set of requests parked for a retry, scored by due time.
pub const DEFAULT_RETRY_SET: &str = "retry-sortedset";
/// Lifetime of a `request-cancel:<id>` marker written by the producer.
pub const CANCEL_MARKER_TTL_SECS: u64 = 7 * 24 * 3600;
/// Prefix of the key holding the active generation's token.
pub const ACTIVE_KEY_PREFIX: &str = "request-active:";
/// Prefix of the key holding the cancelled generation's token.
pub const CANCEL_KEY_PREFIX: &str = "request-cancel:";

/// `request-active:<id>`: the token of the generation the producer submitted last.
pub fn active_key(id: &str) -> String {
    format!("{ACTIVE_KEY_PREFIX}{id}")
}

/// `request-cancel:<id>`: a generation is cancelled when this equals its token.
pub fn cancel_key(id: &str) -> String {
    format!("{CANCEL_KEY_PREFIX}{id}")
}

/// The envelope's `request_kind`: which Go request type `data` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RequestKind {
    /// `plain`: a bare request message.
    Plain,
    /// `redis`: what the Go Redis producers write.
    #[default]
    Redis,
    /// `pubsub`: a message that came through GCP Pub/Sub.
    PubSub,
}

impl RequestKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestKind::Plain => "plain",
            RequestKind::Redis => "redis",
            RequestKind::PubSub => "pubsub",
        }
    }
}

/// What the processor needs from a pending member; the raw bytes stay authoritative.
#[derive(Debug, Clone)]
pub struct ParsedMember {
    /// `data.id`, never empty.
    pub id: String,
    /// `internal.request_token`, empty when absent (pre-token producers).
    pub token: String,
    /// `data.deadline`, Unix seconds, at least 1.
    pub deadline: i64,
    /// `data.created`, Unix seconds; `None` when absent or 0.
    pub created: Option<i64>,
    /// `internal.retry_count`, 0 when absent.
    pub retry_count: u32,
    /// `internal.queue_id`.
    pub queue_id: Option<String>,
    /// `internal.request_queue_name`.
    pub request_queue_name: Option<String>,
    /// `internal.result_queue_name`.
    pub result_queue_name: Option<String>,
    /// `internal.transport_correlation_id`.
    pub transport_correlation_id: Option<String>,
    /// `internal.labels`.
    pub labels: BTreeMap<String, String>,
    /// `data.endpoint`.
    pub endpoint: Option<String>,
    /// `data.headers`.
    pub headers: BTreeMap<String, String>,
    /// `data.metadata`.
    pub metadata: BTreeMap<String, String>,
    /// `data.payload`, a JSON object, byte for byte as in the member.
    pub payload: Box<RawValue>,
    /// `request_kind`.
    pub request_kind: RequestKind,
}

/// Why a member cannot be processed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemberError {
    /// Not a JSON object at all: the member goes to the dead set.
    #[error("member is not a JSON object: {reason}")]
    NotJson { reason: String },
    /// No record can be keyed: the member goes to the dead set.
    #[error("member has no request id: expected data.id to be a non-empty string")]
    MissingId,
    /// The id is known but a field is unusable: answer with `INVALID_REQUEST`.
    #[error("request {id:?}: invalid {field}: {reason}")]
    Invalid {
        id: String,
        field: &'static str,
        reason: String,
    },
}

impl MemberError {
    /// The request id, when the member had one.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            MemberError::Invalid { id, .. } => Some(id),
            _ => None,
        }
    }
}

type Entries<'a> = Vec<(String, &'a RawValue)>;
type Check<T> = Result<T, (&'static str, String)>;

/// A JSON object as its entries in document order, values unparsed.
struct Object<'a>(Entries<'a>);

impl<'de> Deserialize<'de> for Object<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Object<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object<'de>, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                    entries.push(entry);
                }
                Ok(Object(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

fn object(json: &str) -> Result<Entries<'_>, String> {
    serde_json::from_str::<Object>(json)
        .map(|o| o.0)
        .map_err(|e| match serde_json::from_str::<&RawValue>(json) {
            Ok(raw) => format!("expected an object, got {}", describe(raw)),
            Err(_) => e.to_string(),
        })
}

/// The last value of `key` (duplicates: last wins, as in Go), `null` read as absent.
fn field<'a>(entries: &Entries<'a>, key: &str) -> Option<&'a RawValue> {
    entries
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| *v)
        .filter(|v| v.get() != "null")
}

/// A raw value for an error message: scalars shown (shortened), containers named.
fn describe(raw: &RawValue) -> String {
    match raw.get().as_bytes().first() {
        Some(b'{') => "an object".into(),
        Some(b'[') => "an array".into(),
        _ if raw.get().chars().count() > 40 => {
            format!("{}…", raw.get().chars().take(40).collect::<String>())
        }
        _ => raw.get().into(),
    }
}

fn is_object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
}

/// The value at `path` (its last segment is the key) parsed as `T`; `None` when absent.
fn get<T: DeserializeOwned>(
    entries: &Entries,
    path: &'static str,
    expected: &str,
) -> Check<Option<T>> {
    let parse =
        |raw: &RawValue| serde_json::from_str(raw.get()).map_err(|_| bad(path, expected, raw));
    field(entries, key(path)).map(parse).transpose()
}

/// The object key of a field path such as `data.deadline`.
fn key(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

fn bad(path: &'static str, expected: &str, raw: &RawValue) -> (&'static str, String) {
    (path, format!("expected {expected}, got {}", describe(raw)))
}

fn text(entries: &Entries, path: &'static str) -> Check<Option<String>> {
    Ok(get::<String>(entries, path, "a string")?.filter(|s| !s.is_empty()))
}

fn string_map(entries: &Entries, path: &'static str) -> Check<BTreeMap<String, String>> {
    let expected = "an object of string values";
    let Some(raw) = field(entries, key(path)) else {
        return Ok(BTreeMap::new());
    };
    let map = object(raw.get()).map_err(|_| bad(path, expected, raw))?;
    map.into_iter()
        .map(|(k, v)| {
            serde_json::from_str(v.get())
                .map(|s| (k, s))
                .map_err(|_| bad(path, expected, v))
        })
        .collect()
}

/// Unix seconds at `path` from any JSON number, a fraction floored; at least `min`.
fn seconds(entries: &Entries, path: &'static str, expected: &str, min: i64) -> Check<Option<i64>> {
    let Some(raw) = field(entries, key(path)) else {
        return Ok(None);
    };
    let n: Option<Number> = serde_json::from_str(raw.get()).ok();
    let secs = n.and_then(|n| {
        n.as_i64().or_else(|| {
            let f = n.as_f64()?.floor();
            (f.is_finite() && f.abs() < 9.0e18).then_some(f as i64)
        })
    });
    match secs {
        Some(s) if s >= min => Ok(Some(s)),
        _ => Err(bad(path, expected, raw)),
    }
}

/// Parses a pending member without changing it.
pub fn parse_member(raw: &[u8]) -> Result<ParsedMember, MemberError> {
    let not_json = |reason| MemberError::NotJson { reason };
    let text = std::str::from_utf8(raw).map_err(|e| not_json(e.to_string()))?;
    let top = object(text).map_err(not_json)?;
    let data = match field(&top, "data") {
        Some(d) if is_object(d) => object(d.get()).map_err(not_json)?,
        _ => return Err(MemberError::MissingId),
    };
    let id = match field(&data, "id").map(|r| serde_json::from_str::<String>(r.get())) {
        Some(Ok(id)) if !id.is_empty() => id,
        _ => return Err(MemberError::MissingId),
    };
    match fields(&top, &data) {
        Ok(parsed) => Ok(ParsedMember { id, ..parsed }),
        Err((field, reason)) => Err(MemberError::Invalid { id, field, reason }),
    }
}

fn fields(top: &Entries, data: &Entries) -> Check<ParsedMember> {
    let missing = |path, expected: &str| Err((path, format!("missing; expected {expected}")));
    let kinds = r#""plain", "redis" or "pubsub""#;
    let Some(request_kind) = get(top, "request_kind", kinds)? else {
        return missing("request_kind", kinds);
    };
    let internal = match field(top, "internal") {
        Some(raw) if is_object(raw) => object(raw.get()).map_err(|e| ("internal", e))?,
        Some(raw) => return Err(bad("internal", "an object", raw)),
        None => Vec::new(),
    };
    let retry_count = get(&internal, "internal.retry_count", "a non-negative integer")?;
    let when = "a positive Unix timestamp in seconds";
    let Some(deadline) = seconds(data, "data.deadline", when, 1)? else {
        return missing("data.deadline", when);
    };
    let created = seconds(data, "data.created", "Unix seconds", i64::MIN)?;
    let payload = match get::<Box<RawValue>>(data, "data.payload", "a JSON object")? {
        Some(raw) if is_object(&raw) => raw,
        Some(raw) => return Err(bad("data.payload", "a JSON object", &raw)),
        None => return missing("data.payload", "a JSON object"),
    };
    Ok(ParsedMember {
        id: String::new(),
        token: text(&internal, "internal.request_token")?.unwrap_or_default(),
        deadline,
        created: created.filter(|c| *c != 0),
        retry_count: retry_count.unwrap_or(0),
        queue_id: text(&internal, "internal.queue_id")?,
        request_queue_name: text(&internal, "internal.request_queue_name")?,
        result_queue_name: text(&internal, "internal.result_queue_name")?,
        transport_correlation_id: text(&internal, "internal.transport_correlation_id")?,
        labels: string_map(&internal, "internal.labels")?,
        endpoint: text(data, "data.endpoint")?,
        headers: string_map(data, "data.headers")?,
        metadata: string_map(data, "data.metadata")?,
        payload,
        request_kind,
    })
}

const ENVELOPE_ORDER: &[&str] = &["internal", "request_kind", "data"];
const INTERNAL_ORDER: &[&str] = &[
    "retry_count",
    "queue_id",
    "request_token",
    "request_queue_name",
    "result_queue_name",
    "transport_correlation_id",
    "labels",
];

/// Sets `key`: in place when present, else where Go's struct order puts it.
fn put<'a>(entries: &mut Entries<'a>, key: &str, value: &'a RawValue, order: &[&str]) {
    let rank = |k: &str| order.iter().position(|o| *o == k);
    let at = entries
        .iter()
        .position(|(k, _)| k == key)
        .unwrap_or_else(|| {
            entries
                .iter()
                .position(|(k, _)| rank(k) > rank(key))
                .unwrap_or(entries.len())
        });
    entries.retain(|(k, _)| k != key);
    entries.insert(at.min(entries.len()), (key.to_owned(), value));
}

struct Ordered<'e, 'a>(&'e Entries<'a>);

impl Serialize for Ordered<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

fn raw(json: Vec<u8>) -> Box<RawValue> {
    let json = String::from_utf8(json).expect("serde_json writes UTF-8");
    RawValue::from_string(json).expect("serde_json writes valid JSON")
}

/// The member with `internal.retry_count` incremented and `internal.request_queue_name`
/// set; every other value keeps its bytes. Fails as [`parse_member`] would.
pub fn stamp_retry(raw_member: &[u8], request_queue_name: &str) -> Result<Vec<u8>, MemberError> {
    let parsed = parse_member(raw_member)?;
    let count = raw(parsed
        .retry_count
        .saturating_add(1)
        .to_string()
        .into_bytes());
    let queue = raw(go_json(request_queue_name));
    let not_json = |reason| MemberError::NotJson { reason };
    let text = std::str::from_utf8(raw_member).map_err(|e| not_json(e.to_string()))?;
    let mut top = object(text).map_err(not_json)?;
    let mut internal = match field(&top, "internal") {
        Some(r) => object(r.get()).map_err(not_json)?,
        None => Vec::new(),
    };
    put(&mut internal, "retry_count", &count, INTERNAL_ORDER);
    put(&mut internal, "request_queue_name", &queue, INTERNAL_ORDER);
    let internal = raw(go_json(&Ordered(&internal)));
    put(&mut top, "internal", &internal, ENVELOPE_ORDER);
    Ok(go_json(&Ordered(&top)))
}

/// A serde_json formatter that escapes like Go's `json.Marshal` (HTML-safe).
struct GoFormatter;

impl serde_json::ser::Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            let escaped = match c {
                '<' => "\\u003c",
                '>' => "\\u003e",
                '&' => "\\u0026",
                '\u{2028}' => "\\u2028",
                '\u{2029}' => "\\u2029",
                _ => continue,
            };
            w.write_all(&fragment.as_bytes()[start..i])?;
            w.write_all(escaped.as_bytes())?;
            start = i + c.len_utf8();
        }
        w.write_all(&fragment.as_bytes()[start..])
    }
}

/// Serializes as Go's `json.Marshal` would.
fn go_json<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GoFormatter);
    value
        .serialize(&mut ser)
        .expect("string-keyed data serializes to memory");
    out
}

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
