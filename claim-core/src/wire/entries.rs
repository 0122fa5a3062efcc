//! JSON objects read as their entries in document order, values left unparsed, and typed reads of one field.
//!
//! The member parser and the retry stamper share these, so both see the
//! same object (duplicate keys, order) the way Go does.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Number;
use serde_json::value::RawValue;

/// An object's entries in document order; a key borrows the document
/// unless it holds an escape (a member's ~20 keys, read on every claim,
/// allocate nothing).
pub(super) type Entries<'a> = Vec<(Cow<'a, str>, &'a RawValue)>;
/// A field's value, or the field path and why it is unusable.
pub(super) type Check<T> = Result<T, (&'static str, String)>;

/// A JSON object as its entries in document order, values unparsed.
struct Object<'a>(Entries<'a>);

/// An object key, borrowed from the document when it has no escape
/// (serde's own `Cow<str>` always copies).
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, key: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

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
                while let Some((Key(key), value)) = map.next_entry::<Key, &'de RawValue>()? {
                    entries.push((key, value));
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

/// The last value of `key` in the JSON object `json` (duplicates: last
/// wins, `null` read as absent, as [`field`] of [`object`] reads it),
/// without collecting the entries or allocating their keys: the stores read
/// one field per member on the hot path this way. `Err` when `json` is not
/// one JSON object.
pub(super) fn last_field<'a>(json: &'a str, key: &str) -> Result<Option<&'a RawValue>, ()> {
    /// Deserializes a map, keeping the last value whose key is `.0`.
    struct Find<'k>(&'k str);
    /// Deserializes a key, answering whether it is `.0`.
    struct IsKey<'k>(&'k str);
    impl<'de> DeserializeSeed<'de> for IsKey<'_> {
        type Value = bool;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
            d.deserialize_str(self)
        }
    }
    impl Visitor<'_> for IsKey<'_> {
        type Value = bool;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a key")
        }
        fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<bool, E> {
            Ok(key == self.0)
        }
    }
    impl<'de> Visitor<'de> for Find<'_> {
        type Value = Option<&'de RawValue>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = None;
            while let Some(matches) = map.next_key_seed(IsKey(self.0))? {
                let value: &'de RawValue = map.next_value()?;
                if matches {
                    found = Some(value);
                }
            }
            Ok(found.filter(|v| v.get() != "null"))
        }
    }
    let mut de = serde_json::Deserializer::from_str(json);
    let found = de.deserialize_map(Find(key)).map_err(|_| ())?;
    de.end().map_err(|_| ())?;
    Ok(found)
}

/// Unix seconds from a raw JSON number, a fraction floored; `None` for
/// anything else or outside `range` ([`seconds`] reads a field this way).
pub(super) fn seconds_of(raw: &RawValue, range: std::ops::RangeInclusive<i64>) -> Option<i64> {
    number_seconds(&serde_json::from_str(raw.get()).ok()?, range)
}

/// [`seconds_of`] of a number already read.
pub(super) fn number_seconds(n: &Number, range: std::ops::RangeInclusive<i64>) -> Option<i64> {
    let secs = n.as_i64().or_else(|| {
        let f = n.as_f64()?.floor();
        (f.is_finite() && f.abs() < 9.0e18).then_some(f as i64)
    })?;
    range.contains(&secs).then_some(secs)
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

/// The object key of a field path such as `data.deadline`. A plain loop:
/// paths are a few bytes, and `rsplit`'s `memrchr` call cost ~3 % of the
/// worker's CPU at one call per field read.
pub(super) fn key(path: &str) -> &str {
    match path.bytes().rposition(|b| b == b'.') {
        Some(dot) => &path[dot + 1..],
        None => path,
    }
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
                .map(|s| (k.into_owned(), s))
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
    match seconds_of(raw, range) {
        Some(s) => Ok(Some(s)),
        None => Err(bad(path, expected, raw)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_borrow_the_document_and_an_escaped_key_reads_as_its_text() {
        let entries = object(r#"{"data":1,"d\u0061ta":2,"plain":3}"#).expect("an object");
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["data", "data", "plain"]);
        assert!(
            matches!(entries[0].0, Cow::Borrowed(_)),
            "no copy without an escape"
        );
        assert!(
            matches!(entries[1].0, Cow::Owned(_)),
            "an escape is decoded"
        );
        assert_eq!(
            field(&entries, "data").map(RawValue::get),
            Some("2"),
            "the last wins"
        );
    }

    #[test]
    fn a_paths_key_is_its_last_segment() {
        assert_eq!(key("internal.retry_count"), "retry_count");
        assert_eq!(key("a.b.c"), "c");
        assert_eq!(key("request_kind"), "request_kind");
        assert_eq!(key("trailing."), "");
    }
}
