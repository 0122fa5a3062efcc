//! Writing JSON the way Go's `json.Marshal` does: serde's field order, with `<`, `>`, `&`, U+2028 and U+2029 escaped.

use std::io;

use serde::Serialize;

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
pub(super) fn go_json<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    try_go_json(value).expect("string-keyed data serializes to memory")
}

/// [`go_json`] for a value whose serialization may fail (the caller falls back).
pub(super) fn try_go_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GoFormatter);
    value.serialize(&mut ser)?;
    Ok(out)
}
