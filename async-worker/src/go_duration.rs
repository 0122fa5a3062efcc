//! Go `time.ParseDuration` syntax for the processor's duration flags and gate params, plus bare numbers in a flag's unit.
//!
//! Written here rather than taken from a crate, on purpose: `humantime` accepts a
//! superset (`2 hours`, `1d`, `1M` for months, spaces between parts) and rejects
//! Go forms such as `.5s` and `+1s`; `go-parse-duration` (unmaintained since
//! 2021) mixes byte and character indexes and panics on `1µs`. The grammar is
//! Go's exactly: `[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+`, or `0`, with
//! Go's bound of `i64::MAX` nanoseconds.
//!
//! Two readings share one grammar: [`parse_go_duration`] (the processor's
//! flags, which have no use for a negative duration) and
//! [`parse_go_duration_nanos`] (gate params, which Go reads with
//! `time.ParseDuration` itself: signed, and refused with Go's error text).

use std::time::Duration;

const NANOS_PER_SEC: u128 = 1_000_000_000;
/// Go's limit: a `time.Duration` is an `int64` of nanoseconds.
const MAX_NANOS: u128 = i64::MAX as u128;

/// The unit a bare number (no suffix) is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BareUnit {
    Seconds,
    Milliseconds,
}

impl BareUnit {
    fn suffix(self) -> &'static str {
        match self {
            BareUnit::Seconds => "s",
            BareUnit::Milliseconds => "ms",
        }
    }

    /// `n` of this unit (how a config field with this unit is read).
    pub fn times(self, n: u64) -> Duration {
        match self {
            BareUnit::Seconds => Duration::from_secs(n),
            BareUnit::Milliseconds => Duration::from_millis(n),
        }
    }

    /// How help and error texts name the unit.
    pub fn name(self) -> &'static str {
        match self {
            BareUnit::Seconds => "seconds",
            BareUnit::Milliseconds => "milliseconds",
        }
    }
}

/// Why a duration string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("it is negative")]
    Negative,
    #[error("it is empty")]
    Empty,
    #[error("{0}")]
    Invalid(String),
    #[error("a number is missing its unit (ns, us, ms, s, m or h)")]
    MissingUnit,
    #[error("unknown unit {:?} (use ns, us, ms, s, m or h)", truncate(.0))]
    UnknownUnit(String),
    #[error("it exceeds Go's limit of about 292 years")]
    Overflow,
}

/// Go's `strconv.Quote` for the texts a duration can hold: `"` and `\`
/// escaped, control characters as Go writes them, printable text as is.
pub fn go_quote(s: &str) -> String {
    let escaped = s.chars().map(|c| match c {
        '"' | '\\' => format!("\\{c}"),
        // \a \b \t \n \v \f \r, in code point order.
        '\u{7}'..='\u{d}' => format!("\\{}", char::from(b"abtnvfr"[c as usize - 7])),
        c if c.is_ascii_control() => format!("\\x{:02x}", u32::from(c)),
        c if c.is_control() => format!("\\u{:04x}", u32::from(c)),
        c => c.to_string(),
    });
    format!("\"{}\"", escaped.collect::<String>())
}

/// Parses Go duration syntax (`300s`, `1m`, `500ms`, `1h30m`, `1.5s`, `.5s`, `0`).
///
/// A leading `-` on a non-zero value is [`DurationError::Negative`]: the
/// processor has no use for negative durations, so it never returns one.
pub fn parse_go_duration(input: &str) -> Result<Duration, DurationError> {
    let (negative, total) = parse_magnitude(input)?;
    if negative && total > 0 {
        return Err(DurationError::Negative);
    }
    let secs = u64::try_from(total / NANOS_PER_SEC).map_err(|_| DurationError::Overflow)?;
    Ok(Duration::new(secs, (total % NANOS_PER_SEC) as u32))
}

/// Go's `time.ParseDuration` exactly: signed nanoseconds (`-1s` is
/// `-1_000_000_000`), a refusal in Go's words (`time: invalid duration "x"`,
/// `time: missing unit in duration "60"`, `time: unknown unit "d" in
/// duration "1d"`) for the gate errors that quote Go.
pub fn parse_go_duration_nanos(input: &str) -> Result<i64, String> {
    let quoted = go_quote(input);
    let (negative, total) = parse_magnitude(input).map_err(|reason| match reason {
        DurationError::MissingUnit => format!("time: missing unit in duration {quoted}"),
        DurationError::UnknownUnit(unit) => {
            format!(
                "time: unknown unit {} in duration {quoted}",
                go_quote(&unit)
            )
        }
        _ => format!("time: invalid duration {quoted}"),
    })?;
    // At most `i64::MAX`, as `parse_magnitude` bounds it.
    let nanos = total as i64;
    Ok(if negative { -nanos } else { nanos })
}

/// The sign and the magnitude in nanoseconds (at most `i64::MAX`), read as
/// Go's `time.ParseDuration` reads them: digits of a fraction past the 18th
/// are dropped, and each part is truncated to the nanosecond.
fn parse_magnitude(input: &str) -> Result<(bool, u128), DurationError> {
    let negative = input.starts_with('-');
    let mut rest = input.strip_prefix(['-', '+']).unwrap_or(input);
    match rest {
        "0" => return Ok((negative, 0)),
        "" if input.is_empty() => return Err(DurationError::Empty),
        "" => return Err(invalid("a sign needs a number after it")),
        _ => {}
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let (whole, tail) = digits(rest);
        let (fraction, tail) = tail.strip_prefix('.').map_or(("", tail), digits);
        if whole.is_empty() && fraction.is_empty() {
            let at = truncate(rest);
            return Err(invalid(&format!("expected a number at {at:?}")));
        }
        let unit_len = (tail.find(|c: char| c == '.' || c.is_ascii_digit())).unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let per_unit = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => NANOS_PER_SEC,
            "m" => 60 * NANOS_PER_SEC,
            "h" => 3_600 * NANOS_PER_SEC,
            "" => return Err(DurationError::MissingUnit),
            other => return Err(DurationError::UnknownUnit(other.to_owned())),
        };
        let kept = &fraction[..fraction.len().min(18)];
        let fraction = number(kept).unwrap_or(0) * per_unit / 10u128.pow(kept.len() as u32);
        let part = number(whole).and_then(|w| w.checked_mul(per_unit)?.checked_add(fraction));
        total = (part.and_then(|p| total.checked_add(p)))
            .filter(|t| *t <= MAX_NANOS)
            .ok_or(DurationError::Overflow)?;
        rest = tail;
    }
    Ok((negative, total))
}

/// Parses a flag value: Go syntax, or a bare number (`300`, `1.5`) read in `unit`.
pub fn parse_flag_duration(input: &str, unit: BareUnit) -> Result<Duration, DurationError> {
    let trimmed = input.trim();
    let bare = !trimmed.is_empty()
        && trimmed
            .trim_start_matches(['-', '+'])
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.');
    let suffix = if bare { unit.suffix() } else { "" };
    parse_go_duration(&format!("{trimmed}{suffix}"))
}

fn invalid(reason: &str) -> DurationError {
    DurationError::Invalid(reason.to_owned())
}

fn truncate(s: &str) -> String {
    s.chars().take(20).collect()
}

/// The leading ASCII digits of `s` and what follows them.
fn digits(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

/// The value of ASCII digits (`0` for none), `None` past `u128`.
fn number(digits: &str) -> Option<u128> {
    (digits.bytes()).try_fold(0u128, |n, d| {
        n.checked_mul(10)?.checked_add(u128::from(d - b'0'))
    })
}

/// Formats a duration the way Go's `Duration.String` does for whole units
/// (`5m0s` style is avoided: `300s` → `5m`, `1500ms` → `1.5s`), for help and logs.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, per) in [("h", 3_600_000), ("m", 60_000), ("s", 1000)] {
        if ms.is_multiple_of(per) && (ms > 0 || unit == "s") {
            return format!("{}{unit}", ms / per);
        }
    }
    if ms >= 1000 {
        format!("{}s", d.as_secs_f64())
    } else {
        format!("{ms}ms")
    }
}

/// Go's `Duration.String` of signed nanoseconds, exactly (`-1.5s`, `1m30s`,
/// `1h0m0s`, `500ms`, `1.5µs`, `0s`): startup errors quote durations so.
pub fn go_duration_string(nanos: i64) -> String {
    const SEC: u64 = 1_000_000_000;
    if nanos == 0 {
        return "0s".to_owned();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    if n < SEC {
        return match n {
            ..1_000 => format!("{sign}{n}ns"),
            1_000..1_000_000 => format!("{sign}{}µs", with_fraction(n, 1_000)),
            _ => format!("{sign}{}ms", with_fraction(n, 1_000_000)),
        };
    }
    let (hours, minutes) = (n / (3600 * SEC), n / (60 * SEC) % 60);
    let seconds = with_fraction(n % (60 * SEC), SEC);
    match (hours, minutes) {
        (0, 0) => format!("{sign}{seconds}s"),
        (0, m) => format!("{sign}{m}m{seconds}s"),
        (h, m) => format!("{sign}{h}h{m}m{seconds}s"),
    }
}

/// `n / scale` in decimal, the fraction's trailing zeros dropped.
fn with_fraction(n: u64, scale: u64) -> String {
    let (whole, fraction) = (n / scale, n % scale);
    if fraction == 0 {
        return whole.to_string();
    }
    let digits = format!("{fraction:0width$}", width = scale.ilog10() as usize);
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_written_as_go_writes_them() {
        let cases = [
            (0, "0s"),
            (-1_000_000_000, "-1s"),
            (-1_500_000_000, "-1.5s"),
            (-500_000_000, "-500ms"),
            (90_000_000_000, "1m30s"),
            (-3_600_000_000_000, "-1h0m0s"),
            (-60_000_000_000, "-1m0s"),
            (1_500, "1.5µs"),
            (-7, "-7ns"),
            (3_661_000_000_001, "1h1m1.000000001s"),
        ];
        for (nanos, text) in cases {
            assert_eq!(go_duration_string(nanos), text, "{nanos}");
        }
    }

    #[test]
    fn gate_durations_are_signed_nanoseconds_as_go_reads_them() {
        assert_eq!(parse_go_duration_nanos("1m"), Ok(60_000_000_000));
        assert_eq!(parse_go_duration_nanos("-1.5s"), Ok(-1_500_000_000));
        assert_eq!(parse_go_duration_nanos("-0"), Ok(0));
        assert_eq!(parse_go_duration_nanos("500ms"), Ok(500_000_000));
    }

    #[test]
    fn refused_gate_durations_carry_go_error_text() {
        let text = |s: &str| parse_go_duration_nanos(s).unwrap_err().to_string();
        assert_eq!(text("60"), r#"time: missing unit in duration "60""#);
        assert_eq!(text("1d"), r#"time: unknown unit "d" in duration "1d""#);
        assert_eq!(text("abc"), r#"time: invalid duration "abc""#);
        assert_eq!(text(""), r#"time: invalid duration """#);
        assert_eq!(text("-"), r#"time: invalid duration "-""#);
        assert_eq!(text("9999999h"), r#"time: invalid duration "9999999h""#);
        assert_eq!(text("1.5.5s"), r#"time: missing unit in duration "1.5.5s""#);
    }

    #[test]
    fn go_quote_escapes_as_strconv_quote_does() {
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("\n\t\u{1}"), r#""\n\t\x01""#);
        assert_eq!(go_quote("µs"), "\"µs\"");
    }
}
