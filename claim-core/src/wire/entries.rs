//! JSON objects read as their entries in document order with values left unparsed, one key's last value, and why a text is not an object.
//!
//! The member parser, the retry stamper and the stores share these, so all
//! see the same object (duplicate keys, order) the way Go does.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Number;
use serde_json::value::RawValue;

/// An object's entries in document order; a key borrows the document
/// unless it holds an escape (a member's ~20 keys, read on every claim,
/// allocate nothing).
pub(super) type Entries<'a> = Vec<(Cow<'a, str>, &'a RawValue)>;

/// A JSON object as its entries in document order, values unparsed.
struct Object<'a>(Entries<'a>);

/// An object key, borrowed from the document when it has no escape
/// (serde's own `Cow<str>` always copies; `#[serde(borrow)]` borrows).
#[derive(Deserialize)]
#[serde(transparent)]
pub(super) struct Key<'a>(#[serde(borrow)] pub(super) Cow<'a, str>);

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
    read(json, std::marker::PhantomData::<Object>).map(|o| o.0)
}

/// `json` read by `seed` to its end; the error says what `json` is when it
/// is JSON but not what `seed` reads (an object), else where it breaks.
pub(super) fn read<'a, S: DeserializeSeed<'a>>(json: &'a str, seed: S) -> Result<S::Value, String> {
    let mut de = serde_json::Deserializer::from_str(json);
    let value = seed.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    value.map_err(|e| match serde_json::from_str::<&RawValue>(json) {
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
    // Most are plain integers, read without a second JSON parse.
    if let Ok(secs) = raw.get().parse::<i64>() {
        return range.contains(&secs).then_some(secs);
    }
    let n: Number = serde_json::from_str(raw.get()).ok()?;
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
        _ => shortened(raw.get(), 40),
    }
}

/// `text` for an error message, cut at `max` characters.
pub(super) fn shortened(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

pub(super) fn is_object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
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
}
