//! JSON objects read as their entries in document order, values left unparsed, and typed reads of one field.
//!
//! The member parser and the retry stamper share these, so both see the
//! same object (duplicate keys, order) the way Go does.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Number;
use serde_json::value::RawValue;

/// An object's entries in document order.
pub(super) type Entries<'a> = Vec<(String, &'a RawValue)>;
/// A field's value, or the field path and why it is unusable.
pub(super) type Check<T> = Result<T, (&'static str, String)>;

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

pub(super) fn object(json: &str) -> Result<Entries<'_>, String> {
    serde_json::from_str::<Object>(json)
        .map(|o| o.0)
        .map_err(|e| match serde_json::from_str::<&RawValue>(json) {
            Ok(raw) => format!("expected an object, got {}", describe(raw)),
            Err(_) => e.to_string(),
        })
}

/// The last value of `key` (duplicates: last wins, as in Go), `null` read as absent.
pub(super) fn field<'a>(entries: &Entries<'a>, key: &str) -> Option<&'a RawValue> {
    entries
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| *v)
        .filter(|v| v.get() != "null")
}

/// A raw value for an error message: scalars shown (shortened), containers named.
pub(super) fn describe(raw: &RawValue) -> String {
    match raw.get().as_bytes().first() {
        Some(b'{') => "an object".into(),
        Some(b'[') => "an array".into(),
        _ if raw.get().chars().count() > 40 => {
            format!("{}…", raw.get().chars().take(40).collect::<String>())
        }
        _ => raw.get().into(),
    }
}

pub(super) fn is_object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
}

/// The value at `path` (its last segment is the key) parsed as `T`; `None` when absent.
pub(super) fn get<T: DeserializeOwned>(
    entries: &Entries,
    path: &'static str,
    expected: &str,
) -> Check<Option<T>> {
    let parse =
        |raw: &RawValue| serde_json::from_str(raw.get()).map_err(|_| bad(path, expected, raw));
    field(entries, key(path)).map(parse).transpose()
}

/// The object key of a field path such as `data.deadline`.
pub(super) fn key(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

pub(super) fn bad(path: &'static str, expected: &str, raw: &RawValue) -> (&'static str, String) {
    (path, format!("expected {expected}, got {}", describe(raw)))
}

pub(super) fn text(entries: &Entries, path: &'static str) -> Check<Option<String>> {
    Ok(get::<String>(entries, path, "a string")?.filter(|s| !s.is_empty()))
}

pub(super) fn string_map(entries: &Entries, path: &'static str) -> Check<BTreeMap<String, String>> {
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
pub(super) fn seconds(
    entries: &Entries,
    path: &'static str,
    expected: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Check<Option<i64>> {
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
        Some(s) if range.contains(&s) => Ok(Some(s)),
        _ => Err(bad(path, expected, raw)),
    }
}
