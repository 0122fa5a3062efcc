//! Text for the status page: HTML escaping, durations and UTC times (the admin commands print theirs with `utc_iso`).

/// `text` with `& < > " '` escaped, safe in element content and in quoted
/// attribute values. Everything read from Redis goes through it.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A duration in milliseconds as an operator reads it: `850 ms`, `12 s`,
/// `3 m 05 s`, `2 h 04 m`, `3 d 02 h`.
pub fn duration_ms(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        _ if ms < 1000 => format!("{ms} ms"),
        0..60 => format!("{s} s"),
        60..3600 => format!("{} m {:02} s", s / 60, s % 60),
        3600..86400 => format!("{} h {:02} m", s / 3600, s % 3600 / 60),
        _ => format!("{} d {:02} h", s / 86400, s % 86400 / 3600),
    }
}

/// Lease left: `4 m 10 s`, or `expired 3 s ago`.
pub fn lease_left(ms: i64) -> String {
    if ms >= 0 {
        duration_ms(ms as u64)
    } else {
        format!("expired {} ago", duration_ms(ms.unsigned_abs()))
    }
}

/// An optional age: the duration, or `-` when unknown.
pub fn age(ms: Option<u64>) -> String {
    ms.map_or_else(|| "-".to_owned(), duration_ms)
}

/// Unix milliseconds as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc(unix_ms: u64) -> String {
    let (date, time) = date_and_time(unix_ms);
    format!("{date} {time} UTC")
}

/// Unix milliseconds as `YYYY-MM-DDTHH:MM:SSZ`, as the admin commands print it.
pub fn utc_iso(unix_ms: u64) -> String {
    let (date, time) = date_and_time(unix_ms);
    format!("{date}T{time}Z")
}

/// The UTC date (`YYYY-MM-DD`) and time of day (`HH:MM:SS`) `unix_ms`
/// milliseconds after the epoch.
fn date_and_time(unix_ms: u64) -> (String, String) {
    let secs = unix_ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, mo, d) = civil_from_days(days as i64);
    let (h, mi, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
    (
        format!("{y:04}-{mo:02}-{d:02}"),
        format!("{h:02}:{mi:02}:{s:02}"),
    )
}

/// Days since 1970-01-01 as a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_quotes_are_escaped() {
        assert_eq!(
            escape(r#"<img src=x onerror="a('b')">&"#),
            "&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;"
        );
    }

    #[test]
    fn durations_read_in_the_largest_two_units() {
        assert_eq!(duration_ms(850), "850 ms");
        assert_eq!(duration_ms(12_400), "12 s");
        assert_eq!(duration_ms(185_000), "3 m 05 s");
        assert_eq!(duration_ms(7_440_000), "2 h 04 m");
        assert_eq!(duration_ms(266_400_000), "3 d 02 h");
        assert_eq!(lease_left(-3_000), "expired 3 s ago");
        assert_eq!(age(None), "-");
    }

    #[test]
    fn unix_milliseconds_read_as_a_utc_date_and_time() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_796_172_878_123), "2026-12-02 00:54:38 UTC");
    }
}
