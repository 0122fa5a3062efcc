//! Where one queue's requests go: the gateway URL (Go's `url.JoinPath` of base and path) and the headers every request of the queue carries.

use super::{DROPPED_HEADERS, HttpHandlerError, OBJECTIVE_HEADER};
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use std::collections::BTreeMap;

/// Where one queue's requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// The gateway's base URL (Go: `igw_base_url`).
    pub base_url: Url,
    /// Joined to the base when the member names no endpoint (Go: `request_path_url`).
    pub request_path: String,
    /// Sent as [`OBJECTIVE_HEADER`] (Go: `inference_objective`).
    pub inference_objective: Option<String>,
}

impl HttpTarget {
    pub fn new(
        base_url: &str,
        request_path: &str,
        inference_objective: Option<String>,
    ) -> Result<Self, HttpHandlerError> {
        let parsed = Url::parse(base_url).map_err(|e| HttpHandlerError::BadUrl {
            url: base_url.to_owned(),
            reason: e.to_string(),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(HttpHandlerError::Scheme {
                url: base_url.to_owned(),
                scheme: parsed.scheme().to_owned(),
            });
        }
        let request_path = match request_path {
            "" => "/v1/completions".to_owned(),
            p if p.starts_with('/') => p.to_owned(),
            p => format!("/{p}"),
        };
        Ok(HttpTarget {
            base_url: parsed,
            request_path,
            inference_objective: inference_objective.filter(|o| !o.is_empty()),
        })
    }

    /// The URL for a member: its endpoint, else the queue's path, joined to the base.
    pub fn url_for(&self, endpoint: Option<&str>) -> Url {
        let path = endpoint
            .filter(|e| !e.is_empty())
            .unwrap_or(&self.request_path);
        join_path(&self.base_url, path)
    }

    /// The request headers: defaults, then the objective, then the member's own.
    pub fn headers(&self, member: &BTreeMap<String, String>) -> Result<HeaderMap, String> {
        let mut headers = HeaderMap::with_capacity(member.len() + 2);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(objective) = &self.inference_objective {
            let value = HeaderValue::from_str(objective).map_err(|_| {
                format!("inference_objective {objective:?} is not a valid header value")
            })?;
            headers.insert(OBJECTIVE_HEADER, value);
        }
        for (name, value) in member {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("data.headers: {name:?} is not a valid HTTP header name"))?;
            if DROPPED_HEADERS.contains(&name.as_str()) {
                continue;
            }
            let value = HeaderValue::from_str(value).map_err(|_| {
                format!("data.headers: the value of {name:?} is not a valid HTTP header value")
            })?;
            headers.insert(name, value);
        }
        Ok(headers)
    }
}

/// Go's `url.JoinPath(base, elem)`: the paths joined and cleaned (duplicate
/// slashes and dot segments removed), a trailing slash of `elem` kept.
fn join_path(base: &Url, elem: &str) -> Url {
    let joined = format!("{}/{}", base.path(), elem);
    let mut segments: Vec<&str> = Vec::new();
    for segment in joined.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let mut path = format!("/{}", segments.join("/"));
    if elem.ends_with('/') && !path.ends_with('/') {
        path.push('/');
    }
    let mut url = base.clone();
    url.set_path(&path);
    url
}
