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

/// A struct of an object's values, filled one key at a time.
pub(super) trait RawFields<'de>: Default {
    /// Reads the value of `key` into its field (a later value of a key
    /// replaces an earlier one: duplicates, the last wins, as in Go), or
    /// checks it as JSON and skips it when no field has that name.
    fn read<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error>;
}

/// Declares a [`RawFields`] struct read from a JSON object by [`FieldsOf`]:
/// an `Option<&RawValue>` per key, kept as written (`null` included), and,
/// after a `;`, fields read in place as a struct of their own.
macro_rules! raw_fields {
    (
        $(#[$doc:meta])*
        struct $name:ident { $($key:ident),* $(,)? $(; $($field:ident: $ty:ident),+)? }
    ) => {
        $(#[$doc])*
        #[derive(Default)]
        pub(super) struct $name<'a> {
            $(pub(super) $key: Option<&'a serde_json::value::RawValue>,)*
            $($(pub(super) $field: Option<$ty<'a>>,)+)?
        }

        impl<'de> super::fields::RawFields<'de> for $name<'de> {
            fn read<A: serde::de::MapAccess<'de>>(
                &mut self,
                key: &str,
                map: &mut A,
            ) -> Result<(), A::Error> {
                match key {
                    $(stringify!($key) => self.$key = Some(map.next_value()?),)*
                    $($(stringify!($field) => self.$field = Some(map.next_value()?),)+)?
                    _ => drop(map.next_value::<serde::de::IgnoredAny>()?),
                }
                Ok(())
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
            fields.read(&key, &mut map)?;
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
    let text = present(raw).map(|raw| string(raw).map_err(|_| bad(path, "a string", raw)));
    Ok(text.transpose()?.filter(|s| !s.is_empty()))
}

/// A JSON string's text: the bytes between its quotes when it holds no
/// escape (reading the value checked them), else decoded.
pub(super) fn string(raw: &RawValue) -> serde_json::Result<String> {
    let plain = raw
        .get()
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'));
    match plain {
        Some(plain) if !plain.contains('\\') => Ok(plain.to_owned()),
        _ => serde_json::from_str(raw.get()),
    }
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
            string(v)
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
    let read = |raw| seconds_of(raw, range).ok_or_else(|| bad(path, expected, raw));
    present(raw).map(read).transpose()
}
