//! The param kinds: what each accepts as JSON or as a string holding it, the defaults, and refusals that name the gate, the parameter, the value and what is accepted.

use super::*;
use serde_json::json;

fn params(value: Value) -> GateParams {
    match json!({ "k": value }) {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

/// `k` holding `value`, read as a `T` with `default`.
fn get<T: Param>(value: Value, default: T) -> Result<T, GateConfigError> {
    Params::new("g", &params(value)).get("k", default)
}

/// The refusal of `k` holding `value` as a `T`.
fn refused<T: Param + Default + std::fmt::Debug>(value: Value) -> String {
    get::<T>(value, T::default()).unwrap_err().0
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
    assert_eq!(Params::new("g", &params(json!(2))).text("k", "d"), "2");
}

#[test]
fn floats_read_go_syntax_and_integers() {
    assert_eq!(get(json!("0.7"), 0.0), Ok(0.7));
    assert_eq!(get(json!("1e3"), 0.0), Ok(1000.0));
    assert_eq!(get(json!("0x1p-2"), 0.0), Ok(0.25));
    assert_eq!(get(json!("-Inf"), 0.0), Ok(f64::NEG_INFINITY));
    assert!(get(json!("NaN"), 0.0).unwrap().is_nan());
    assert_eq!(get(json!(""), 0.5), Ok(0.5));
    assert_eq!(get(json!(null), 0.5), Ok(0.5));
    assert_eq!(get(json!(2), 0.5), Ok(2.0));
}

#[test]
fn go_float_syntax_is_parsed_as_strconv_does() {
    for (text, value) in [
        ("+1.5", 1.5),
        ("-2", -2.0),
        (".5", 0.5),
        ("1E+2", 100.0),
        ("infinity", f64::INFINITY),
        ("+INF", f64::INFINITY),
        ("0X1.8P1", 3.0),
        ("-0x10p0", -16.0),
    ] {
        assert_eq!(parse_go_float(text), Ok(value), "{text}");
    }
    for text in [
        "", "abc", "1e400", "0x1", "0x.p1", "1_0", " 1", "1 ", "+inf0",
    ] {
        assert!(parse_go_float(text).is_err(), "{text}");
    }
}

#[test]
fn ints_read_whole_numbers_and_numeric_strings() {
    assert_eq!(get(json!(5), 0), Ok(5));
    assert_eq!(get(json!(5.0), 0), Ok(5));
    assert_eq!(get(json!("7"), 0), Ok(7));
    assert_eq!(get(json!("+7"), 0), Ok(7));
    assert_eq!(get(json!("-7"), 0), Ok(-7));
    assert_eq!(get(json!(""), 3), Ok(3));
}

#[test]
fn durations_read_go_syntax_and_default_when_empty() {
    assert_eq!(get(json!("1m"), Nanos(0)), Ok(Nanos(60_000_000_000)));
    assert_eq!(get(json!("-2s"), Nanos(0)), Ok(Nanos(-2_000_000_000)));
    assert_eq!(get(json!(0), Nanos(7)), Ok(Nanos(0)));
    assert_eq!(get(json!(""), Nanos(7)), Ok(Nanos(7)));
    assert_eq!(
        Params::new("g", &GateParams::new()).get("k", Nanos(7)),
        Ok(Nanos(7))
    );
}

#[test]
fn a_bad_value_is_refused_naming_the_gate_the_param_the_value_and_what_is_accepted() {
    let number = "a number, or a string holding one";
    let whole = "a whole number, or a string holding one";
    let duration = "a Go duration string";
    let cases = [
        (refused::<f64>(json!("abc")), "\"abc\"", number),
        (refused::<f64>(json!(true)), "true", number),
        (refused::<f64>(json!("1e400")), "\"1e400\"", number),
        (refused::<i64>(json!(2.5)), "2.5", whole),
        (refused::<i64>(json!("1.0")), "\"1.0\"", whole),
        (refused::<i64>(json!([1])), "[1]", whole),
        (
            Params::new("g", &params(json!(60)))
                .get("k", Nanos(0))
                .unwrap_err()
                .0,
            "60",
            duration,
        ),
        (
            Params::new("g", &params(json!("soon")))
                .get("k", Nanos(0))
                .unwrap_err()
                .0,
            "\"soon\"",
            duration,
        ),
    ];
    for (error, value, accepted) in cases {
        assert!(
            error.starts_with(&format!(
                "g gate: parameter 'k' cannot be {value}: expected "
            )),
            "{error}"
        );
        assert!(error.contains(accepted), "{error}");
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
    let refusal = string_map(&params(json!(3)), "k").unwrap_err();
    assert!(
        refusal.contains("cannot be 3: expected an object"),
        "{refusal}"
    );
}

#[test]
fn an_object_param_comes_as_an_object_or_a_json_string() {
    let read = |value: Value| get(value, GateParams::new());
    assert_eq!(read(json!({"a": 1})).unwrap()["a"], json!(1));
    assert_eq!(read(json!(r#"{"a":1}"#)).unwrap()["a"], json!(1));
    for empty in [Value::Null, json!(""), json!("null")] {
        assert_eq!(read(empty), Ok(GateParams::new()));
    }
    for refused in [json!("[1]"), json!("{"), json!(true)] {
        let error = read(refused.clone()).unwrap_err().0;
        let expected = format!("g gate: parameter 'k' cannot be {refused}: expected an object");
        assert!(error.starts_with(&expected), "{error}");
    }
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
