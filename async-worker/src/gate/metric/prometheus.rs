//! The Prometheus instant-query client of the Prometheus gates: form POST to `/api/v1/query` (GET when the server refuses POST), a vector's first sample, Basic auth from the URL's userinfo.

use super::reading::{Reading, SourceError};
use crate::gate::params::parse_go_float;
use reqwest::{StatusCode, Url, header};
use serde_json::Value;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long one query may take before it counts as a failed read (Go
/// bounds it by the caller's context; a hung server must not hang a poll).
const QUERY_TIMEOUT: Duration = Duration::from_secs(10);

/// One Prometheus server, from `--prometheus-url`.
#[derive(Debug)]
pub(crate) struct PrometheusClient {
    http: reqwest::Client,
    /// `<url>/api/v1/query`, userinfo removed.
    endpoint: Url,
    /// User and password of the URL's userinfo, sent as Basic auth.
    auth: Option<(String, String)>,
}

impl PrometheusClient {
    /// A client for `url`; the error says why the URL is unusable.
    pub(crate) fn new(url: &str) -> Result<Self, String> {
        let mut endpoint =
            Url::parse(url).map_err(|e| format!("invalid --prometheus-url {url:?}: {e}"))?;
        let auth = (!endpoint.username().is_empty()).then(|| {
            let password = endpoint.password().map(percent_decode).unwrap_or_default();
            (percent_decode(endpoint.username()), password)
        });
        // Setting userinfo fails only on URLs that cannot have it (no host),
        // which have none to remove.
        let _ = endpoint.set_username("");
        let _ = endpoint.set_password(None);
        let path = format!("{}/api/v1/query", endpoint.path().trim_end_matches('/'));
        endpoint.set_path(&path);
        Ok(PrometheusClient {
            http: super::scrape::http_client()?,
            endpoint,
            auth,
        })
    }

    /// The first sample of `query`'s instant vector at now.
    pub(crate) async fn first_sample(&self, query: &str) -> Reading {
        let time = unix_seconds_now();
        let pairs = [("query", query), ("time", time.as_str())];
        let mut form = Url::parse("http://form.invalid/").expect("a literal URL");
        form.query_pairs_mut().extend_pairs(pairs);
        let post = self
            .http
            .post(self.endpoint.clone())
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form.query().unwrap_or_default().to_owned());
        let (status, body) = self.send(post).await?;
        let (status, body) = if matches!(
            status,
            StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED
        ) {
            let mut url = self.endpoint.clone();
            url.query_pairs_mut().extend_pairs(pairs);
            self.send(self.http.get(url)).await?
        } else {
            (status, body)
        };
        first_vector_sample(status, &body)
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<(StatusCode, Vec<u8>), SourceError> {
        let request = match &self.auth {
            Some((user, password)) => request.basic_auth(user, Some(password)),
            None => request,
        };
        let context = format!("query {}", self.endpoint);
        let response = request
            .timeout(QUERY_TIMEOUT)
            .send()
            .await
            .map_err(SourceError::http(context.clone()))?;
        let status = response.status();
        let body = response.bytes().await.map_err(SourceError::http(context))?;
        Ok((status, body.to_vec()))
    }
}

/// Reads an API answer: an error status or a non-vector result is an
/// error, an empty vector no sample, else the first sample's value.
fn first_vector_sample(status: StatusCode, body: &[u8]) -> Reading {
    let answer: Value = match serde_json::from_slice(body) {
        Ok(answer) => answer,
        Err(_) if !status.is_success() => {
            return Err(SourceError::Failed(format!("prometheus answered {status}")));
        }
        Err(e) => {
            return Err(SourceError::Failed(format!(
                "prometheus answer unreadable: {e}"
            )));
        }
    };
    if answer["status"] != "success" {
        let kind = answer["errorType"].as_str().unwrap_or("error");
        let error = answer["error"].as_str().unwrap_or("no error text");
        return Err(SourceError::Failed(format!(
            "prometheus answered {status}: {kind}: {error}"
        )));
    }
    let data = &answer["data"];
    let result_type = data["resultType"].as_str().unwrap_or("");
    if result_type != "vector" {
        return Err(SourceError::Failed(format!(
            "unexpected result type {result_type:?}, expected vector"
        )));
    }
    let Some(first) = data["result"].as_array().and_then(|r| r.first()) else {
        return Ok(None);
    };
    let value = first["value"][1]
        .as_str()
        .ok_or_else(|| SourceError::Failed(format!("a sample without a value: {first}")))?;
    parse_go_float(value).map(Some).map_err(SourceError::Failed)
}

/// Now in Unix seconds with the fraction, as Go's client sends `time`.
fn unix_seconds_now() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format!("{:.3}", now.as_secs_f64())
}

/// `%XX` escapes of a URL's userinfo decoded (invalid ones kept as is).
fn percent_decode(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                i += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_becomes_basic_auth_and_leaves_the_url() {
        let client = PrometheusClient::new("http://us%40er:p%3Ass@prom:9090/sub/").unwrap();
        assert_eq!(
            client.endpoint.as_str(),
            "http://prom:9090/sub/api/v1/query"
        );
        assert_eq!(client.auth, Some(("us@er".to_owned(), "p:ss".to_owned())));
        let plain = PrometheusClient::new("http://prom:9090").unwrap();
        assert_eq!(plain.endpoint.as_str(), "http://prom:9090/api/v1/query");
        assert_eq!(plain.auth, None);
    }

    #[test]
    fn a_non_vector_result_is_an_error_and_an_empty_vector_no_sample() {
        let scalar = br#"{"status":"success","data":{"resultType":"scalar","result":[1,"2"]}}"#;
        let error = first_vector_sample(StatusCode::OK, scalar).unwrap_err();
        assert!(error.to_string().contains("\"scalar\""), "{error}");
        let empty = br#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        assert_eq!(first_vector_sample(StatusCode::OK, empty).unwrap(), None);
        let nan = br#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"NaN"]}]}}"#;
        assert!(
            first_vector_sample(StatusCode::OK, nan)
                .unwrap()
                .unwrap()
                .is_nan()
        );
    }

    #[test]
    fn an_api_error_names_its_type_and_text() {
        let bad = br#"{"status":"error","errorType":"bad_data","error":"parse error"}"#;
        let error = first_vector_sample(StatusCode::BAD_REQUEST, bad).unwrap_err();
        assert_eq!(
            error.to_string(),
            "prometheus answered 400 Bad Request: bad_data: parse error"
        );
        let error = first_vector_sample(StatusCode::BAD_GATEWAY, b"<html>").unwrap_err();
        assert_eq!(error.to_string(), "prometheus answered 502 Bad Gateway");
    }
}
