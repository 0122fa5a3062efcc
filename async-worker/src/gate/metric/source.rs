//! Where a metric gate reads its value (one query, a cascade of them, a scrape) and the gate itself: the metric core over that source, budget-only.

use super::cache::SourceCache;
use super::formula::MetricCore;
use super::prometheus::PrometheusClient;
use super::reading::{Reading, SourceError};
use super::scrape::ScrapeSource;
use crate::gate::contract::DispatchGate;
use std::sync::Arc;

/// One PromQL expression read through its own cache.
#[derive(Debug)]
pub(crate) struct QuerySource {
    pub(crate) client: Arc<PrometheusClient>,
    pub(crate) query: String,
    pub(crate) cache: SourceCache,
}

impl QuerySource {
    async fn read(&self) -> Reading {
        self.cache.read(self.client.first_sample(&self.query)).await
    }
}

/// Where a metric gate reads D.
#[derive(Debug)]
pub(crate) enum Source {
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
    pub(crate) gate_type: &'static str,
    pub(crate) source: Source,
    pub(crate) core: MetricCore,
}

#[async_trait::async_trait]
impl DispatchGate for MetricGate {
    async fn budget(&self) -> f64 {
        let reading = self.source.read().await;
        self.core.budget(self.gate_type, &reading)
    }
}
