//! Reading `gate_params` as Go does: values usually arrive as strings, absent or `null` means the default, and a bad value is refused with Go's text.
//!
//! Each reader takes the params, the key and the default. The kinds:
//! - [`string`]: a string (`""` is the default), a number (shortest
//!   decimal, no exponent) or a bool; an object or array is the default.
//! - [`float`]: a number, or a string in Go `ParseFloat` syntax (`1e3`,
//!   `inf`, `NaN`, hex `0x1p-2`; `""` is the default).
//! - [`int`]: an integral number, or a string in Go `Atoi` syntax (`"1.0"`
//!   is refused).
//! - [`duration`]: a Go duration string (`1m`, `500ms`, `-1s`); numbers
//!   are formatted first, so `60` is refused for its missing unit.
//! - [`string_map`]: an object (values formatted as Go's `%v`) or a string
//!   holding a JSON object of strings.

use super::contract::{GateConfigError, GateParams};
use crate::go_duration::parse_go_duration_nanos;
use serde_json::Value;
use std::collections::BTreeMap;

/// A value present and not `null`.
fn present<'a>(params: &'a GateParams, key: &str) -> Option<&'a Value> {
    params.get(key).filter(|v| !v.is_null())
}

/// A string param: see the module docs.
pub fn string(params: &GateParams, key: &str, default: &str) -> String {
    match present(params, key) {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Number(n)) => n.as_f64().map_or_else(|| n.to_string(), |f| format!("{f}")),
        Some(Value::Bool(b)) => b.to_string(),
        _ => default.to_owned(),
    }
}

/// A float param: see the module docs.
pub fn float(params: &GateParams, key: &str, default: f64) -> Result<f64, GateConfigError> {
    match present(params, key) {
        None => Ok(default),
        Some(Value::Number(n)) => Ok(n.as_f64().unwrap_or(default)),
        Some(Value::String(s)) if s.is_empty() => Ok(default),
        Some(Value::String(s)) => parse_go_float(s)
            .map_err(|e| GateConfigError(format!("invalid {key} value '{s}': {e}"))),
        Some(other) => Err(unsupported(key, other)),
    }
}

/// An integer param: see the module docs.
pub fn int(params: &GateParams, key: &str, default: i64) -> Result<i64, GateConfigError> {
    match present(params, key) {
        None => Ok(default),
        Some(Value::Number(n)) => {
            if let Some(i) = n.as_i64() {
                return Ok(i);
            }
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.fract() == 0.0 && f.abs() < 9.2e18 {
                Ok(f as i64)
            } else {
                Err(GateConfigError(format!(
                    "invalid {key} value: {} is not an integer",
                    go_value(&Value::Number(n.clone()))
                )))
            }
        }
        Some(Value::String(s)) if s.is_empty() => Ok(default),
        Some(Value::String(s)) => {
            parse_go_atoi(s).map_err(|e| GateConfigError(format!("invalid {key} value '{s}': {e}")))
        }
        Some(other) => Err(unsupported(key, other)),
    }
}

/// A string-map param: an object, or a JSON object encoded in a string.
/// Absent, `null` or `""` is an empty map. The error is the decoder's, for
/// the gate to wrap (`<gate> gate failed to parse '<key>': …`).
pub fn string_map(params: &GateParams, key: &str) -> Result<BTreeMap<String, String>, String> {
    match present(params, key) {
        None => Ok(BTreeMap::new()),
        Some(Value::String(s)) if s.is_empty() => Ok(BTreeMap::new()),
        Some(Value::String(s)) => {
            serde_json::from_str::<BTreeMap<String, String>>(s).map_err(|e| e.to_string())
        }
        Some(Value::Object(map)) => Ok(map.iter().map(|(k, v)| (k.clone(), go_value(v))).collect()),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go value of type map[string]string",
            json_kind(other)
        )),
    }
}

/// A duration param in signed nanoseconds, read as Go's
/// `time.ParseDuration` reads it. A number is formatted first (`60` is then
/// refused for its missing unit); `""` is the default.
pub fn duration(
    params: &GateParams,
    key: &str,
    default_nanos: i64,
) -> Result<i64, GateConfigError> {
    let text = match present(params, key) {
        None => return Ok(default_nanos),
        Some(Value::String(s)) => s.clone(),
        Some(other) => go_value(other),
    };
    if text.is_empty() {
        return Ok(default_nanos);
    }
    parse_go_duration_nanos(&text)
        .map_err(|e| GateConfigError(format!("invalid {key} value '{text}': {e}")))
}

fn unsupported(key: &str, value: &Value) -> GateConfigError {
    GateConfigError(format!(
        "invalid {key} value: unsupported type {}",
        go_type(value)
    ))
}

/// Go's `%T` of a decoded JSON value.
pub fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// The JSON kind Go's decoder names in a type mismatch (`object`, `number`).
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's `%v` of a decoded JSON value.
pub fn go_value(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), go_float),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_value).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}:{}", go_value(v)))
                .collect();
            format!("map[{}]", items.join(" "))
        }
    }
}

/// Go's `%v` (and `%g`) of a float64: the shortest digits that round-trip,
/// with an exponent below 1e-4 and from 1e6 on (`2.5`, `100`, `123456`,
/// `1e+06`, `1e-05`): strconv's `'g'` at the shortest precision.
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        format!("{f}")
    }
}

/// Go `strconv.ParseFloat(s, 64)`: decimal, `inf`/`infinity`/`nan` in any
/// case with an optional sign, and hex mantissas with a `p` exponent.
pub fn parse_go_float(s: &str) -> Result<f64, String> {
    let syntax = || format!("strconv.ParseFloat: parsing {s:?}: invalid syntax");
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let magnitude = if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else if lower == "nan" {
        f64::NAN
    } else if let Some(hex) = lower.strip_prefix("0x") {
        parse_hex_float(hex).ok_or_else(syntax)?
    } else {
        let decimal = body
            .bytes()
            .all(|b| b.is_ascii_digit() || b".eE+-".contains(&b))
            && body.bytes().any(|b| b.is_ascii_digit());
        if !decimal {
            return Err(syntax());
        }
        let value: f64 = body.parse().map_err(|_| syntax())?;
        if value.is_infinite() {
            return Err(format!(
                "strconv.ParseFloat: parsing {s:?}: value out of range"
            ));
        }
        value
    };
    Ok(if negative { -magnitude } else { magnitude })
}

/// `<hex digits>[.<hex digits>]p<exponent>` (after `0x`), as Go requires.
fn parse_hex_float(hex: &str) -> Option<f64> {
    let (mantissa, exponent) = hex.split_once('p')?;
    let exponent: i32 = exponent.parse().ok()?;
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut value = 0f64;
    for c in whole.chars() {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in fraction.chars() {
        value += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    Some(value * 2f64.powi(exponent))
}

/// Go `strconv.Atoi`: an optional sign and decimal digits, within 64 bits.
pub fn parse_go_atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {s:?}: invalid syntax"));
    }
    s.trim_start_matches('+')
        .parse()
        .map_err(|_| format!("strconv.Atoi: parsing {s:?}: value out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(value: Value) -> GateParams {
        match json!({ "k": value }) {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    /// The error `read` gives for `k` holding `value`.
    fn refused<T: std::fmt::Debug + Default>(
        read: fn(&GateParams, &str, T) -> Result<T, GateConfigError>,
        value: Value,
    ) -> String {
        read(&params(value), "k", T::default()).unwrap_err().0
    }

    #[test]
    fn strings_take_numbers_and_bools_and_ignore_objects() {
        assert_eq!(string(&params(json!("x")), "k", "d"), "x");
        assert_eq!(string(&params(json!("")), "k", "d"), "d");
        assert_eq!(string(&params(json!(0.8)), "k", "d"), "0.8");
        assert_eq!(
            string(&params(json!(1e21)), "k", "d"),
            "1000000000000000000000"
        );
        assert_eq!(string(&params(json!(true)), "k", "d"), "true");
        assert_eq!(string(&params(json!({"a": 1})), "k", "d"), "d");
        assert_eq!(string(&params(json!(null)), "k", "d"), "d");
        assert_eq!(string(&GateParams::new(), "k", "d"), "d");
    }

    #[test]
    fn floats_read_go_syntax_and_integers() {
        assert_eq!(float(&params(json!("0.7")), "k", 0.0), Ok(0.7));
        assert_eq!(float(&params(json!("1e3")), "k", 0.0), Ok(1000.0));
        assert_eq!(float(&params(json!("0x1p-2")), "k", 0.0), Ok(0.25));
        assert_eq!(
            float(&params(json!("-Inf")), "k", 0.0),
            Ok(f64::NEG_INFINITY)
        );
        assert!(float(&params(json!("NaN")), "k", 0.0).unwrap().is_nan());
        assert_eq!(float(&params(json!("")), "k", 0.5), Ok(0.5));
        assert_eq!(float(&params(json!(2)), "k", 0.5), Ok(2.0));
    }

    #[test]
    fn ints_read_whole_numbers_and_numeric_strings() {
        assert_eq!(int(&params(json!(5)), "k", 0), Ok(5));
        assert_eq!(int(&params(json!(5.0)), "k", 0), Ok(5));
        assert_eq!(int(&params(json!("7")), "k", 0), Ok(7));
    }

    #[test]
    fn durations_read_go_syntax_and_default_when_empty() {
        assert_eq!(duration(&params(json!("1m")), "k", 0), Ok(60_000_000_000));
        assert_eq!(duration(&params(json!("-2s")), "k", 0), Ok(-2_000_000_000));
        assert_eq!(duration(&params(json!("")), "k", 7), Ok(7));
        assert_eq!(duration(&GateParams::new(), "k", 7), Ok(7));
    }

    #[test]
    fn a_bad_float_int_or_duration_is_refused_with_gos_text_naming_the_key() {
        let cases = [
            (
                refused(float, json!("abc")),
                "invalid k value 'abc': strconv.ParseFloat: parsing \"abc\": invalid syntax",
            ),
            (
                refused(float, json!(true)),
                "invalid k value: unsupported type bool",
            ),
            (
                refused(float, json!("1e400")),
                "invalid k value '1e400': strconv.ParseFloat: parsing \"1e400\": value out of range",
            ),
            (
                refused(int, json!(2.5)),
                "invalid k value: 2.5 is not an integer",
            ),
            (
                refused(int, json!("1.0")),
                "invalid k value '1.0': strconv.Atoi: parsing \"1.0\": invalid syntax",
            ),
            (
                refused(int, json!([1])),
                "invalid k value: unsupported type []interface {}",
            ),
            (
                refused(duration, json!(60)),
                "invalid k value '60': time: missing unit in duration \"60\"",
            ),
            (
                refused(duration, json!("soon")),
                "invalid k value 'soon': time: invalid duration \"soon\"",
            ),
        ];
        for (error, expected) in cases {
            assert_eq!(error, expected);
        }
    }

    #[test]
    fn string_maps_come_as_objects_or_json_strings() {
        let from_object = string_map(&params(json!({"a": "x", "b": 2})), "k").unwrap();
        assert_eq!(from_object["a"], "x");
        assert_eq!(from_object["b"], "2");
        let from_string = string_map(&params(json!(r#"{"a":"x"}"#)), "k").unwrap();
        assert_eq!(from_string["a"], "x");
        assert!(string_map(&params(json!("{")), "k").is_err());
        assert!(string_map(&params(json!("")), "k").unwrap().is_empty());
    }

    #[test]
    fn go_float_formats_as_percent_v() {
        let cases = [
            (100.0, "100"),
            (2.5, "2.5"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (1e21, "1e+21"),
            (0.00001, "1e-05"),
            (0.0001, "0.0001"),
        ];
        for (f, text) in cases {
            assert_eq!(go_float(f), text, "{f:?}");
        }
    }
}
