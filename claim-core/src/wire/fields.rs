//! One pass over a member's objects: the raw values of the keys the parser reads, and typed reads of one of them that name the field when it is unusable.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;

use super::entries::{Key, describe, object, seconds_of};

/// A field's value, or the field path and why it is unusable.
pub(super) type Check<T> = Result<T, (&'static str, String)>;

/// A struct of an object's values, each kept raw as written (`null`
/// included), filled one key at a time.
pub(super) trait RawFields<'a>: Default {
    /// Keeps `value` when `key` is one of the fields; a later value of a
    /// key replaces an earlier one (duplicates: the last wins, as in Go).
    fn set(&mut self, key: &str, value: &'a RawValue);
}

/// Declares a [`RawFields`] struct, one `Option<&RawValue>` per key, read
/// from a JSON object by [`FieldsOf`].
macro_rules! raw_fields {
    ($(#[$doc:meta])* struct $name:ident { $($key:ident),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Default)]
        pub(super) struct $name<'a> {
            $(pub(super) $key: Option<&'a serde_json::value::RawValue>,)*
        }

        impl<'a> super::fields::RawFields<'a> for $name<'a> {
            fn set(&mut self, key: &str, value: &'a serde_json::value::RawValue) {
                match key {
                    $(stringify!($key) => self.$key = Some(value),)*
                    _ => {}
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name<'de> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_map(super::fields::FieldsOf(std::marker::PhantomData))
            }
        }
    };
}
pub(super) use raw_fields;

/// Reads a JSON object into the [`RawFields`] `T` in one pass: any other
/// key is checked as JSON and skipped, and no key without an escape is copied.
pub(super) struct FieldsOf<T>(pub(super) PhantomData<T>);

impl<'de, T: RawFields<'de>> Visitor<'de> for FieldsOf<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut fields = T::default();
        while let Some(Key(key)) = map.next_key()? {
            fields.set(&key, map.next_value()?);
        }
        Ok(fields)
    }
}

/// A raw value, `None` when it is JSON `null` (read as absent, as in Go).
pub(super) fn present(raw: Option<&RawValue>) -> Option<&RawValue> {
    raw.filter(|v| v.get() != "null")
}

/// The value at `path` parsed as `T`; `None` when absent.
pub(super) fn get<T: DeserializeOwned>(
    raw: Option<&RawValue>,
    path: &'static str,
    expected: &str,
) -> Check<Option<T>> {
    let parse =
        |raw: &RawValue| serde_json::from_str(raw.get()).map_err(|_| bad(path, expected, raw));
    present(raw).map(parse).transpose()
}

pub(super) fn bad(path: &'static str, expected: &str, raw: &RawValue) -> (&'static str, String) {
    (path, format!("expected {expected}, got {}", describe(raw)))
}

/// A string at `path`; empty reads as absent.
pub(super) fn text(raw: Option<&RawValue>, path: &'static str) -> Check<Option<String>> {
    Ok(get::<String>(raw, path, "a string")?.filter(|s| !s.is_empty()))
}

pub(super) fn string_map(
    raw: Option<&RawValue>,
    path: &'static str,
) -> Check<BTreeMap<String, String>> {
    let expected = "an object of string values";
    let Some(raw) = present(raw) else {
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

/// Unix seconds at `path` from any JSON number, a fraction floored, within `range`.
pub(super) fn seconds(
    raw: Option<&RawValue>,
    path: &'static str,
    expected: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Check<Option<i64>> {
    let Some(raw) = present(raw) else {
        return Ok(None);
    };
    match seconds_of(raw, range) {
        Some(s) => Ok(Some(s)),
        None => Err(bad(path, expected, raw)),
    }
}
