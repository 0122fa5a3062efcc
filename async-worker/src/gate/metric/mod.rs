//! The metric gates (`prometheus-saturation`, `prometheus-budget`, `prometheus-query`, `endpoint-scrape`): a budget read from one metric, as Go's metric core computes it.
//!
//! Every metric gate reads one value D from its source (a Prometheus
//! instant query, the first that answers of a cascade of them, or a
//! scrape) and turns it into a budget against its threshold T: 0 when D is
//! at or below T, else `min(1, D - T)`. A source that fails, answers no
//! sample or answers NaN or an infinity gives the gate's fallback instead,
//! so a gate always answers. Each source is read through a [`cache`] with
//! the process's `--prometheus-cache-ttl`. `apply` is budget-only: refuse
//! when the budget is not above 0.
//!
//! Built only with the `metric-gates` feature (reqwest and a text-format
//! parser); without it the factory refuses these types by name.

mod cache;
mod config;
mod formula;
mod prometheus;
mod promql;
mod scrape;
#[cfg(test)]
mod tests;

pub use config::{TYPES, build};

use super::contract::{DispatchGate, GateError, GateRequest, Releases, Verdict, budget_only};
use cache::SourceCache;
use formula::MetricCore;
use prometheus::PrometheusClient;
use scrape::ScrapeSource;
use std::sync::Arc;

/// What one read of a source found: the first sample's value, `None` when
/// it answered no sample, or why it could not be read.
pub(crate) type Reading = Result<Option<f64>, SourceError>;

/// Why a metric source could not be read. Cloned into the cache, which
/// keeps failures for the TTL as it keeps values.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SourceError {
    /// The HTTP call itself failed (connect, timeout, body).
    #[error("{context}: {source}")]
    Http {
        context: String,
        #[source]
        source: Arc<reqwest::Error>,
    },
    /// The source answered, but not with a value we can use.
    #[error("{0}")]
    Failed(String),
    /// No source of a cascade answered a sample.
    #[error("all metric sources unavailable")]
    AllUnavailable,
}

/// One PromQL expression read through its own cache.
#[derive(Debug)]
struct QuerySource {
    client: Arc<PrometheusClient>,
    query: String,
    cache: SourceCache,
}

impl QuerySource {
    async fn read(&self) -> Reading {
        self.cache.read(self.client.first_sample(&self.query)).await
    }
}

/// Where a metric gate reads D.
#[derive(Debug)]
enum Source {
    /// One query (`prometheus-saturation`, `prometheus-query`).
    Query(QuerySource),
    /// The first query with no error and a sample wins; a winner's NaN is
    /// the gate's fallback, not a reason to ask the next one.
    Cascade(Vec<QuerySource>),
    /// A scrape of an endpoint's /metrics (`endpoint-scrape`).
    Scrape(ScrapeSource),
}

impl Source {
    async fn read(&self) -> Reading {
        match self {
            Source::Query(query) => query.read().await,
            Source::Cascade(queries) => {
                for (index, query) in queries.iter().enumerate() {
                    match query.read().await {
                        Ok(Some(value)) => return Ok(Some(value)),
                        Ok(None) => tracing::debug!(index, "metric source answered no sample"),
                        Err(error) => tracing::debug!(index, %error, "metric source failed"),
                    }
                }
                Err(SourceError::AllUnavailable)
            }
            Source::Scrape(scrape) => scrape.read().await,
        }
    }
}

/// A gate whose budget is the metric core over one source.
#[derive(Debug)]
pub struct MetricGate {
    gate_type: &'static str,
    source: Source,
    core: MetricCore,
}

#[async_trait::async_trait]
impl DispatchGate for MetricGate {
    async fn budget(&self) -> f64 {
        let reading = self.source.read().await;
        self.core.budget(self.gate_type, &reading)
    }

    async fn apply(
        &self,
        _request: &mut GateRequest<'_>,
        _releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        Ok(budget_only(self).await)
    }
}
