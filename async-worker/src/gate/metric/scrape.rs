//! `endpoint-scrape`'s source: GET an endpoint's metrics in the Prometheus text format, pick the first matching sample, and scale it by a fixed or pod-scaled maximum.

use super::cache::SourceCache;
use super::formula::clamp_unit;
use super::reading::{Reading, SourceError};
use crate::gate::params::parse_go_float;
use prom_text_format_parser::{Scrape, Type, ValueType};
use std::collections::BTreeMap;
use std::time::Duration;

/// Go's scrape timeout.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(10);

/// The HTTP client of every metric source (rustls with ring, system CAs,
/// proxies from the environment).
pub(crate) fn http_client() -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(SCRAPE_TIMEOUT)
        .build()
        .map_err(|e| format!("cannot build the metric HTTP client: {e}"))
}

/// Which series of which endpoint to read.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub(crate) url: String,
    pub(crate) metric: String,
    /// Every one must equal the sample's label (a missing label is `""`).
    pub(crate) labels: BTreeMap<String, String>,
}

/// The scrape, its scaling, and its cache.
#[derive(Debug)]
pub(crate) struct ScrapeSource {
    pub(crate) http: reqwest::Client,
    pub(crate) series: Series,
    pub(crate) max_count_per_pod: f64,
    /// `pods_url` + `pods_metric` (+ `pods_labels`), when both are set: the
    /// ready pods that `max_count_per_pod` is multiplied by.
    pub(crate) pods: Option<Series>,
    pub(crate) cache: SourceCache,
}

impl ScrapeSource {
    /// D = 1 − s, s the sample over the maximum (when above 0), in [0, 1].
    pub(crate) async fn read(&self) -> Reading {
        self.cache.read(self.scrape()).await
    }

    async fn scrape(&self) -> Reading {
        let Some(value) = self.first_sample(&self.series).await? else {
            return Ok(None);
        };
        let max_count = match &self.pods {
            None => self.max_count_per_pod,
            Some(pods) => {
                let ready = self.first_sample(pods).await?.ok_or_else(|| {
                    SourceError::Failed(format!(
                        "scrape: pods metric {} not found at {}",
                        pods.metric, pods.url
                    ))
                })?;
                if ready.is_nan() || ready <= 0.0 {
                    return Err(SourceError::Failed(format!(
                        "scrape: pods metric {} at {} is {ready}, not above 0",
                        pods.metric, pods.url
                    )));
                }
                ready * self.max_count_per_pod
            }
        };
        let share = if max_count > 0.0 {
            value / max_count
        } else {
            value
        };
        Ok(Some(1.0 - clamp_unit(share)))
    }

    async fn first_sample(&self, series: &Series) -> Result<Option<f64>, SourceError> {
        let context = format!("scrape {}", series.url);
        let response = self
            .http
            .get(&series.url)
            .timeout(SCRAPE_TIMEOUT)
            .send()
            .await
            .map_err(SourceError::http(context.clone()))?;
        let status = response.status();
        if status != reqwest::StatusCode::OK {
            return Err(SourceError::Failed(format!(
                "scrape {}: unexpected status {status}",
                series.url
            )));
        }
        let body = response.text().await.map_err(SourceError::http(context))?;
        first_matching(&body, series)
    }
}

/// The first gauge, counter or untyped sample of `series.metric`, in file
/// order, whose labels match; any syntax error in the body fails the read.
pub(crate) fn first_matching(body: &str, series: &Series) -> Result<Option<f64>, SourceError> {
    if body.trim().is_empty() {
        return Ok(None);
    }
    let scrape = Scrape::parse(body)
        .map_err(|e| SourceError::Failed(format!("scrape {}: parse: {e:?}", series.url)))?;
    let samples = scrape
        .metrics
        .iter()
        .filter(|m| m.name == series.metric)
        .filter(|m| matches!(m.kind, Type::Gauge | Type::Counter | Type::Untyped))
        .flat_map(|m| m.samples.iter())
        .filter(|s| s.value.value_type == ValueType::Sample);
    for sample in samples {
        let matches = series.labels.iter().all(|(key, wanted)| {
            let value = sample.labels.iter().find(|l| &l.key == key);
            value.map_or(String::new(), |l| unescape(&l.value)) == *wanted
        });
        if matches {
            return parse_go_float(&sample.value.value)
                .map(Some)
                .map_err(SourceError::Failed);
        }
    }
    Ok(None)
}

/// A label value as written (`\\`, `\"`, `\n` escaped) made plain.
fn unescape(escaped: &str) -> String {
    let mut plain = String::with_capacity(escaped.len());
    let mut chars = escaped.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('n') => plain.push('\n'),
                Some(other) => plain.push(other),
                None => plain.push('\\'),
            },
            (c, false) => plain.push(c),
        }
    }
    plain
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = "# HELP vllm:num_requests_waiting waiting\n\
        # TYPE vllm:num_requests_waiting gauge\n\
        vllm:num_requests_waiting{model_name=\"a\",pod=\"p1\"} 3\n\
        vllm:num_requests_waiting{model_name=\"b\\\"x\",pod=\"p2\"} 7\n\
        # TYPE lat summary\n\
        lat{quantile=\"0.5\"} 1\n\
        lat_sum 2\n\
        lat_count 3\n";

    fn series(metric: &str, labels: &[(&str, &str)]) -> Series {
        Series {
            url: "http://stand-in/metrics".into(),
            metric: metric.into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn the_first_sample_in_file_order_whose_labels_all_match_is_read() {
        let all = series("vllm:num_requests_waiting", &[]);
        assert_eq!(first_matching(BODY, &all).unwrap(), Some(3.0));
        let escaped = series("vllm:num_requests_waiting", &[("model_name", "b\"x")]);
        assert_eq!(first_matching(BODY, &escaped).unwrap(), Some(7.0));
        let missing_is_empty = series("vllm:num_requests_waiting", &[("absent", "")]);
        assert_eq!(first_matching(BODY, &missing_is_empty).unwrap(), Some(3.0));
        let none = series("vllm:num_requests_waiting", &[("pod", "p9")]);
        assert_eq!(first_matching(BODY, &none).unwrap(), None);
    }

    #[test]
    fn an_absent_family_or_a_summary_has_no_samples() {
        assert_eq!(first_matching(BODY, &series("nope", &[])).unwrap(), None);
        assert_eq!(first_matching(BODY, &series("lat", &[])).unwrap(), None);
        assert_eq!(first_matching("", &series("nope", &[])).unwrap(), None);
    }

    #[test]
    fn a_syntax_error_anywhere_fails_the_read() {
        let broken = format!("{BODY}this is not a sample line\n");
        let error = first_matching(&broken, &series("vllm:num_requests_waiting", &[]));
        assert!(error.is_err(), "{error:?}");
    }
}
