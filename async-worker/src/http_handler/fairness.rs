//! Fairness stamping: the gateway's fairness header set from a metadata attribute of the request (Go: on by default, `x-llm-d-inference-fairness-id` from `data.metadata.userid`).
//!
//! The value is the producer's, so it is checked like any header value: an
//! empty one, one over 256 bytes or one that is not a legal header value is
//! skipped (the request still goes out, unstamped). A member's own
//! `data.headers` entry of the same name (in any case) is replaced: the
//! stamp, not the producer, has the last word on whose share a request
//! counts against.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::collections::BTreeMap;

/// Go's default fairness header.
pub const FAIRNESS_HEADER: &str = "x-llm-d-inference-fairness-id";
/// Go's default metadata attribute for the fairness id.
pub const FAIRNESS_ATTRIBUTE: &str = "userid";
/// The longest fairness id stamped, in bytes.
pub const MAX_FAIRNESS_ID: usize = 256;

/// Which header carries the fairness id and where the id comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fairness {
    /// `None` when stamping is off (`fairness_header: ""`).
    header: Option<HeaderName>,
    attribute: String,
}

impl Default for Fairness {
    /// Go's default: on, `x-llm-d-inference-fairness-id` from `userid`.
    fn default() -> Self {
        Fairness {
            header: Some(HeaderName::from_static(FAIRNESS_HEADER)),
            attribute: FAIRNESS_ATTRIBUTE.to_owned(),
        }
    }
}

impl Fairness {
    /// From a merge policy's `fairness_header` and `fairness_attribute`
    /// params: an absent header is the default, `""` turns stamping off, an
    /// illegal name is refused with Go's text; an absent or empty attribute
    /// is `userid`.
    pub fn new(header: Option<&str>, attribute: Option<&str>) -> Result<Self, String> {
        let header = match header {
            None => Some(HeaderName::from_static(FAIRNESS_HEADER)),
            Some("") => None,
            Some(name) => Some(HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                format!("fairness_header {name:?} is not a legal HTTP header name")
            })?),
        };
        let attribute = attribute
            .filter(|a| !a.is_empty())
            .unwrap_or(FAIRNESS_ATTRIBUTE);
        Ok(Fairness {
            header,
            attribute: attribute.to_owned(),
        })
    }

    /// Sets the fairness header from `metadata`, replacing any value the
    /// member's own headers gave it; skips a missing or unusable id.
    pub fn stamp(&self, headers: &mut HeaderMap, metadata: &BTreeMap<String, String>) {
        let Some(header) = &self.header else {
            return;
        };
        let Some(id) = metadata.get(&self.attribute) else {
            return;
        };
        if id.is_empty() || id.len() > MAX_FAIRNESS_ID {
            return;
        }
        let Ok(value) = HeaderValue::from_str(id) else {
            return;
        };
        // HeaderMap names are case-insensitive: insert replaces every
        // case-variant the member sent.
        headers.insert(header.clone(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(id: &str) -> BTreeMap<String, String> {
        BTreeMap::from([("userid".to_owned(), id.to_owned())])
    }

    #[test]
    fn by_default_the_userid_is_stamped_and_replaces_the_members_own_value() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "X-LLM-D-Inference-Fairness-Id",
            HeaderValue::from_static("spoofed"),
        );
        Fairness::default().stamp(&mut headers, &metadata("alice"));
        assert_eq!(headers.get_all(FAIRNESS_HEADER).iter().count(), 1);
        assert_eq!(headers[FAIRNESS_HEADER], "alice");
    }

    #[test]
    fn empty_oversized_and_illegal_ids_are_skipped() {
        for id in ["", &"a".repeat(MAX_FAIRNESS_ID + 1), "bad\nvalue"] {
            let mut headers = HeaderMap::new();
            Fairness::default().stamp(&mut headers, &metadata(id));
            assert!(headers.is_empty(), "{id:?} was stamped");
        }
        let mut headers = HeaderMap::new();
        Fairness::default().stamp(&mut headers, &metadata(&"a".repeat(MAX_FAIRNESS_ID)));
        assert_eq!(headers.len(), 1, "256 bytes is still stamped");
    }

    #[test]
    fn an_empty_header_name_turns_stamping_off_and_an_illegal_one_is_refused() {
        let mut headers = HeaderMap::new();
        Fairness::new(Some(""), None)
            .unwrap()
            .stamp(&mut headers, &metadata("alice"));
        assert!(headers.is_empty());
        assert_eq!(
            Fairness::new(Some("bad header"), None).unwrap_err(),
            "fairness_header \"bad header\" is not a legal HTTP header name"
        );
    }

    #[test]
    fn a_configured_attribute_and_header_are_used() {
        let fairness = Fairness::new(Some("x-team"), Some("team")).unwrap();
        let mut headers = HeaderMap::new();
        let metadata = BTreeMap::from([("team".to_owned(), "red".to_owned())]);
        fairness.stamp(&mut headers, &metadata);
        assert_eq!(headers["x-team"], "red");
    }
}
