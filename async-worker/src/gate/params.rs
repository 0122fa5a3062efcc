//! Reading one gate's `gate_params` into typed values: each given as JSON of its kind or as a string holding one, as Go reads them; absent, `null` or `""` is the default.
//!
//! The kinds ([`Param`]): `f64` (Go `ParseFloat` syntax in a string:
//! `1e3`, `inf`, `NaN`, hex `0x1p-2`), `i64` (a whole number; Go `Atoi`
//! syntax in a string), [`Nanos`] (a Go duration string, `1m`, `-1s`),
//! string maps and objects (JSON, or a string holding JSON), and the nested
//! gate configurations of [`super::nested`]. Text params ([`Params::text`])
//! are never refused: a number or bool is formatted, an object or array is
//! the default. A value of the wrong kind is refused naming the gate, the
//! parameter, the value given and what the kind accepts.

use super::contract::{GateConfigError, GateParams};
use crate::go_duration::parse_go_duration_nanos;
use serde_json::Value;
use std::collections::BTreeMap;

/// One gate's `gate_params`, with the gate type its errors name.
#[derive(Debug, Clone, Copy)]
pub struct Params<'a> {
    pub gate: &'static str,
    pub given: &'a GateParams,
}

/// A kind of param value.
pub trait Param: Sized {
    /// What the kind accepts, as a refusal says it.
    const ACCEPTS: &'static str;

    /// The value `given` (neither `null` nor `""`) holds, or why it is
    /// refused (empty when [`Param::ACCEPTS`] says it all).
    fn read(given: &Value) -> Result<Self, String>;
}

impl<'a> Params<'a> {
    pub fn new(gate: &'static str, given: &'a GateParams) -> Self {
        Params { gate, given }
    }

    /// A text param: see the module docs.
    pub fn text(&self, key: &str, default: &str) -> String {
        string(self.given, key, default)
    }

    /// A typed param; `default` when absent, `null` or `""`.
    pub fn get<T: Param>(&self, key: &str, default: T) -> Result<T, GateConfigError> {
        Ok(self.optional(key)?.unwrap_or(default))
    }

    /// A typed param that must be given; `missing` is the error otherwise.
    pub fn required<T: Param>(&self, key: &str, missing: &str) -> Result<T, GateConfigError> {
        self.optional(key)?
            .ok_or_else(|| GateConfigError(missing.to_owned()))
    }

    fn optional<T: Param>(&self, key: &str) -> Result<Option<T>, GateConfigError> {
        let Some(given) = given(self.given, key) else {
            return Ok(None);
        };
        read(given).map(Some).map_err(|refusal| {
            GateConfigError(format!("{} gate: parameter '{key}' {refusal}", self.gate))
        })
    }
}

/// The value of `key`; `None` when absent, `null` or `""`.
fn given<'a>(params: &'a GateParams, key: &str) -> Option<&'a Value> {
    params
        .get(key)
        .filter(|given| !given.is_null() && given.as_str() != Some(""))
}

/// `given` read as a `T`, or its refusal: what was given and what `T` accepts.
fn read<T: Param>(given: &Value) -> Result<T, String> {
    T::read(given).map_err(|why| {
        let why = if why.is_empty() {
            why
        } else {
            format!(" ({why})")
        };
        format!("cannot be {given}: expected {}{why}", T::ACCEPTS)
    })
}

/// A string param read as Go does: a string (`""` is the default), a number
/// (shortest decimal, no exponent) or a bool; an object or array is the
/// default.
pub fn string(params: &GateParams, key: &str, default: &str) -> String {
    match params.get(key) {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Number(n)) => n.as_f64().map_or_else(|| n.to_string(), |f| format!("{f}")),
        Some(Value::Bool(b)) => b.to_string(),
        _ => default.to_owned(),
    }
}

/// A string-map param: an object (values formatted as Go's `%v`), or a
/// string holding a JSON object of strings; absent, `null` or `""` is
/// empty. The refusal is for the caller to wrap.
pub fn string_map(params: &GateParams, key: &str) -> Result<BTreeMap<String, String>, String> {
    given(params, key).map_or(Ok(BTreeMap::new()), read)
}

impl Param for f64 {
    const ACCEPTS: &'static str = "a number, or a string holding one";

    fn read(given: &Value) -> Result<Self, String> {
        match given {
            Value::Number(n) => n.as_f64().ok_or_else(String::new),
            Value::String(text) => parse_go_float(text),
            _ => Err(String::new()),
        }
    }
}

impl Param for i64 {
    const ACCEPTS: &'static str = "a whole number, or a string holding one";

    fn read(given: &Value) -> Result<Self, String> {
        match given {
            Value::Number(n) => n.as_i64().or_else(|| {
                let f = n.as_f64()?;
                (f.fract() == 0.0 && f.abs() < 9.2e18).then_some(f as i64)
            }),
            Value::String(text) => text.parse().ok(),
            _ => None,
        }
        .ok_or_else(String::new)
    }
}

/// A Go duration in signed nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nanos(pub i64);

impl Param for Nanos {
    const ACCEPTS: &'static str = "a Go duration string such as \"1m\" or \"500ms\"";

    /// A number is formatted first, so only `0` passes without a unit.
    fn read(given: &Value) -> Result<Self, String> {
        let text = match given {
            Value::String(text) => text.clone(),
            Value::Number(_) => go_value(given),
            _ => return Err(String::new()),
        };
        parse_go_duration_nanos(&text)
            .map(Nanos)
            .map_err(|e| e.to_string())
    }
}

impl Param for BTreeMap<String, String> {
    const ACCEPTS: &'static str = "an object, or a string holding a JSON object of strings";

    fn read(given: &Value) -> Result<Self, String> {
        match given {
            Value::String(text) => serde_json::from_str(text).map_err(|e| e.to_string()),
            Value::Object(map) => Ok(map.iter().map(|(k, v)| (k.clone(), go_value(v))).collect()),
            _ => Err(String::new()),
        }
    }
}

impl Param for GateParams {
    const ACCEPTS: &'static str = "an object, or a string holding one";

    /// A string holding `null` is empty.
    fn read(given: &Value) -> Result<Self, String> {
        match json(given)? {
            Value::Null => Ok(GateParams::new()),
            Value::Object(map) => Ok(map),
            _ => Err(String::new()),
        }
    }
}

/// The JSON a param holds: itself, or what its string holds.
pub(crate) fn json(given: &Value) -> Result<Value, String> {
    match given {
        Value::String(text) => serde_json::from_str(text).map_err(|e| e.to_string()),
        other => Ok(other.clone()),
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

/// Go `strconv.ParseFloat(s, 64)`: an optional sign, then a finite decimal,
/// `inf`/`infinity`/`nan` in any case, or a hex mantissa with a `p`
/// exponent (`0x1p-2`).
pub fn parse_go_float(s: &str) -> Result<f64, String> {
    let (negative, body) = match s.strip_prefix('-') {
        Some(body) => (true, body),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let special = ["inf", "infinity", "nan"]
        .iter()
        .any(|word| body.eq_ignore_ascii_case(word));
    let magnitude = match body.get(..2) {
        Some("0x" | "0X") => parse_hex_float(&body[2..]),
        _ => body.parse().ok().filter(|f: &f64| f.is_finite() || special),
    };
    match magnitude {
        Some(f) => Ok(if negative { -f } else { f }),
        None => Err(format!("{s:?} is not a number")),
    }
}

/// `<hex digits>[.<hex digits>]p<exponent>` (after `0x`), as Go requires.
fn parse_hex_float(hex: &str) -> Option<f64> {
    let (mantissa, exponent) = hex.split_once(['p', 'P'])?;
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

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
