//! `gcs_uri_multipart`: a request whose payload names a Google Cloud Storage signed URL (`gcs_uri`) goes to the gateway as multipart/form-data with that URL as the `url` field.
//!
//! It owns a request when `metadata.provider` is one of its `providers` and
//! the payload holds a non-empty string `gcs_uri`. The check refuses a
//! signed URL that expires at or before the request's deadline (V4:
//! `X-Goog-Date` + `X-Goog-Expires`; V2: `Expires`); a URL with neither
//! passes. The rewrite refuses a payload that also carries `file_base64`
//! (the file must come from the URL alone), and sends `url` = `gcs_uri`
//! plus every other top-level field (strings as they are, anything else as
//! JSON). Every refusal starts `INVALID_REQ: `, as Go's do.

use super::multipart::FormData;
use super::{Fields, PayloadFields, Rewritten, TransformInput};
use serde_json::Value;

/// The type name in the transform config file.
pub const GCS_URI_MULTIPART: &str = "gcs_uri_multipart";

/// A configured `gcs_uri_multipart`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcsUriMultipart {
    providers: Vec<String>,
}

impl GcsUriMultipart {
    /// From its `parameters`: `{"providers": ["…", …]}`, non-empty, no
    /// empty names, no other keys.
    pub fn from_params(parameters: &Value) -> Result<Self, String> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Params {
            #[serde(default)]
            providers: Vec<String>,
        }
        let params: Params = serde_json::from_value(parameters.clone())
            .map_err(|e| format!("invalid {GCS_URI_MULTIPART} parameters: {e}"))?;
        if params.providers.is_empty() {
            return Err(format!(
                "{GCS_URI_MULTIPART} needs a non-empty 'providers' list"
            ));
        }
        if params.providers.iter().any(String::is_empty) {
            return Err(format!(
                "{GCS_URI_MULTIPART} 'providers' holds an empty name"
            ));
        }
        Ok(GcsUriMultipart {
            providers: params.providers,
        })
    }

    /// The payload's fields and its `gcs_uri`, when this transform owns
    /// the request. The payload is parsed at most once per request, into
    /// `parsed`, and only once a provider matched.
    fn owned<'f>(
        &self,
        input: TransformInput<'_>,
        parsed: &'f PayloadFields,
    ) -> Option<(&'f Fields, &'f str)> {
        let provider = input.metadata.get("provider")?;
        if !self.providers.iter().any(|p| p == provider) {
            return None;
        }
        let fields = parsed
            .get_or_init(|| match serde_json::from_str::<Value>(input.payload) {
                Ok(Value::Object(fields)) => Some(fields),
                _ => None,
            })
            .as_ref()?;
        let uri = fields.get("gcs_uri")?.as_str().filter(|u| !u.is_empty())?;
        Some((fields, uri))
    }

    pub fn validate(
        &self,
        input: TransformInput<'_>,
        parsed: &PayloadFields,
    ) -> Result<(), String> {
        let Some((_, uri)) = self.owned(input, parsed) else {
            return Ok(());
        };
        match signed_url_expiry(uri)? {
            Some(expiry) if expiry <= input.deadline_secs => Err(format!(
                "INVALID_REQ: the signed gcs_uri expires at {expiry} (Unix seconds), not after the request's deadline {}",
                input.deadline_secs
            )),
            _ => Ok(()),
        }
    }

    pub fn rewrite(
        &self,
        input: TransformInput<'_>,
        parsed: &PayloadFields,
    ) -> Result<Option<Rewritten>, String> {
        let Some((fields, uri)) = self.owned(input, parsed) else {
            return Ok(None);
        };
        let inline = fields
            .get("file_base64")
            .is_some_and(|f| !matches!(f, Value::Null) && f.as_str() != Some(""));
        if inline {
            return Err(
                "INVALID_REQ: file_base64 and gcs_uri are both set; send the file by gcs_uri alone"
                    .to_owned(),
            );
        }
        let mut form = FormData::new();
        form.text("url", uri);
        for (name, value) in fields {
            if name == "gcs_uri" || name == "file_base64" {
                continue;
            }
            match value {
                Value::String(s) => form.text(name, s),
                other => form.text(name, &other.to_string()),
            }
        }
        Ok(Some(form.finish()))
    }
}

/// When a signed URL stops working, Unix seconds: V4's `X-Goog-Date` plus
/// `X-Goog-Expires`, or V2's `Expires`; `None` when it says neither.
fn signed_url_expiry(uri: &str) -> Result<Option<i64>, String> {
    let query = uri.split_once('?').map_or("", |(_, q)| q);
    let query = query.split('#').next().unwrap_or("");
    let param = |name: &str| {
        query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    };
    if let (Some(date), Some(expires)) = (param("X-Goog-Date"), param("X-Goog-Expires")) {
        let start = parse_goog_date(date).ok_or_else(|| {
            format!("INVALID_REQ: gcs_uri has an unreadable X-Goog-Date {date:?}")
        })?;
        let seconds: i64 = expires.parse().map_err(|_| {
            format!("INVALID_REQ: gcs_uri has an unreadable X-Goog-Expires {expires:?}")
        })?;
        return Ok(Some(start.saturating_add(seconds)));
    }
    if let Some(expires) = param("Expires") {
        let at: i64 = expires
            .parse()
            .map_err(|_| format!("INVALID_REQ: gcs_uri has an unreadable Expires {expires:?}"))?;
        return Ok(Some(at));
    }
    Ok(None)
}

/// `YYYYMMDD'T'HHMMSS'Z'` as Unix seconds.
fn parse_goog_date(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(range)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (year, month, day) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (hour, minute, second) = (num(9..11)?, num(11..13)?, num(13..15)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goog_dates_read_as_unix_seconds() {
        assert_eq!(parse_goog_date("19700101T000000Z"), Some(0));
        assert_eq!(parse_goog_date("20261202T170000Z"), Some(1_796_230_800));
        assert_eq!(parse_goog_date("2026-12-02T17:00Z"), None);
        assert_eq!(parse_goog_date("20261302T170000Z"), None);
    }

    #[test]
    fn a_signed_url_expires_by_v4_then_v2_fields_or_not_at_all() {
        let v4 = "https://storage.googleapis.com/b/o?X-Goog-Date=19700101T000000Z&X-Goog-Expires=600&X-Goog-Signature=s";
        assert_eq!(signed_url_expiry(v4), Ok(Some(600)));
        assert_eq!(
            signed_url_expiry("https://h/o?Expires=1234&Signature=s"),
            Ok(Some(1234))
        );
        assert_eq!(signed_url_expiry("gs://bucket/object"), Ok(None));
        assert!(
            signed_url_expiry("https://h/o?Expires=soon")
                .unwrap_err()
                .starts_with("INVALID_REQ: ")
        );
    }
}
