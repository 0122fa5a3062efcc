//! Building the metric gates from `gate_params`: defaults, validation and startup errors in Go's exact words.

use super::cache::SourceCache;
use super::formula::MetricCore;
use super::prometheus::PrometheusClient;
use super::promql;
use super::scrape::{ScrapeSource, Series, http_client};
use super::source::{MetricGate, QuerySource, Source};
use crate::gate::contract::{DispatchGate, GateConfigError, GateEnv, GateOwner, GateParams};
use crate::gate::params::{self, go_float};
use std::sync::Arc;

/// The gate types this module builds.
pub const TYPES: [&str; 4] = [
    "prometheus-saturation",
    "prometheus-budget",
    "prometheus-query",
    "endpoint-scrape",
];

/// The metric gate `gate_type` (one of [`TYPES`]) asks for.
pub fn build(
    gate_type: &str,
    params: &GateParams,
    owner: &GateOwner,
    env: &GateEnv,
) -> Result<Arc<dyn DispatchGate>, GateConfigError> {
    let gate = match gate_type {
        "prometheus-saturation" => saturation(params, owner, env)?,
        "prometheus-budget" => budget(params, owner, env)?,
        "prometheus-query" => query(params, owner, env)?,
        "endpoint-scrape" => endpoint_scrape(params, env)?,
        other => {
            return Err(GateConfigError(format!(
                "{other:?} is not a metric gate type"
            )));
        }
    };
    Ok(Arc::new(gate))
}

fn error(text: impl Into<String>) -> GateConfigError {
    GateConfigError(text.into())
}

/// The Prometheus server of `--prometheus-url`, which these gates require.
fn prometheus(gate_type: &str, env: &GateEnv) -> Result<Arc<PrometheusClient>, GateConfigError> {
    let url = env.prometheus_url.as_deref().unwrap_or_default();
    if url.is_empty() {
        return Err(error(format!(
            "{gate_type} gate type requires --prometheus-url flag to be set"
        )));
    }
    PrometheusClient::new(url).map(Arc::new).map_err(error)
}

fn query_source(client: &Arc<PrometheusClient>, query: String, env: &GateEnv) -> QuerySource {
    QuerySource {
        client: client.clone(),
        query,
        cache: SourceCache::new(env.prometheus_cache_ttl),
    }
}

/// `prometheus-saturation`: D = 1 − saturation, T = 1 − `threshold`, and
/// `fallback` is a saturation too, so the default fails open.
fn saturation(
    params: &GateParams,
    owner: &GateOwner,
    env: &GateEnv,
) -> Result<MetricGate, GateConfigError> {
    const TYPE: &str = "prometheus-saturation";
    let client = prometheus(TYPE, env)?;
    let pool = params::string(params, "pool", "");
    if pool.is_empty() {
        return Err(error(
            "inference pool name is required for saturation PromQL",
        ));
    }
    let namespace = params::string(params, "namespace", "");
    let threshold = params::float(params, "threshold", 0.8)?;
    let fallback = params::float(params, "fallback", 0.0)?;
    let query = promql::saturation(&pool, &namespace);
    tracing::info!(gate_type = TYPE, %pool, %query, "metric gate built");
    Ok(MetricGate {
        gate_type: TYPE,
        source: Source::Query(query_source(&client, query, env)),
        core: MetricCore::new(1.0 - threshold, 1.0 - fallback, owner, &pool),
    })
}

/// `prometheus-budget`: the three-query cascade against `max_concurrency`
/// per ready pod, T = `baseline`.
fn budget(
    params: &GateParams,
    owner: &GateOwner,
    env: &GateEnv,
) -> Result<MetricGate, GateConfigError> {
    const TYPE: &str = "prometheus-budget";
    let client = prometheus(TYPE, env)?;
    let pool = params::string(params, "pool", "");
    if pool.is_empty() {
        return Err(error(
            "inference pool name is required for prometheus-budget gate",
        ));
    }
    let namespace = params::string(params, "namespace", "");
    let max_concurrency = params::float(params, "max_concurrency", 100.0)?;
    if max_concurrency.is_nan() || max_concurrency <= 0.0 {
        return Err(error(format!(
            "max_concurrency must be positive, got {}",
            go_float(max_concurrency)
        )));
    }
    let baseline = params::float(params, "baseline", 0.05)?;
    if !(0.0..1.0).contains(&baseline) {
        return Err(error(format!(
            "baseline must be in [0, 1), got {}",
            go_float(baseline)
        )));
    }
    let fallback = params::float(params, "fallback", 0.0)?;
    let queries = promql::budget_cascade(&pool, &namespace, max_concurrency);
    for (index, query) in queries.iter().enumerate() {
        tracing::info!(gate_type = TYPE, %pool, index, %query, "metric gate source");
    }
    tracing::info!(
        gate_type = TYPE,
        %pool,
        closes_at_load_per_ready_pod = max_concurrency * (1.0 - baseline),
        "metric gate built"
    );
    Ok(MetricGate {
        gate_type: TYPE,
        source: Source::Cascade(
            queries
                .into_iter()
                .map(|query| query_source(&client, query, env))
                .collect(),
        ),
        core: MetricCore::new(baseline, fallback, owner, &pool),
    })
}

/// `prometheus-query`: any PromQL, sent verbatim, T = 0; `pool` only
/// labels the gauges.
fn query(
    params: &GateParams,
    owner: &GateOwner,
    env: &GateEnv,
) -> Result<MetricGate, GateConfigError> {
    const TYPE: &str = "prometheus-query";
    let client = prometheus(TYPE, env)?;
    let query = params::string(params, "query", "");
    if query.is_empty() {
        return Err(error(
            "prometheus-query gate requires a 'query' parameter with a PromQL expression",
        ));
    }
    let fallback = params::float(params, "fallback", 0.0)?;
    let pool = params::string(params, "pool", "");
    tracing::info!(gate_type = TYPE, %pool, %query, "metric gate built");
    Ok(MetricGate {
        gate_type: TYPE,
        source: Source::Query(query_source(&client, query, env)),
        core: MetricCore::new(0.0, fallback, owner, &pool),
    })
}

/// `endpoint-scrape`: a scraped sample over its maximum, T = `baseline`.
/// It has no owner: its gauges carry empty labels, one series shared by
/// every such gate.
fn endpoint_scrape(params: &GateParams, env: &GateEnv) -> Result<MetricGate, GateConfigError> {
    const TYPE: &str = "endpoint-scrape";
    let url = params::string(params, "url", "");
    if url.is_empty() {
        return Err(error("endpoint-scrape gate requires a 'url' parameter"));
    }
    let metric = params::string(params, "metric", "");
    if metric.is_empty() {
        return Err(error("endpoint-scrape gate requires a 'metric' parameter"));
    }
    let labels = params::string_map(params, "labels").map_err(|e| {
        error(format!(
            "endpoint-scrape gate failed to parse 'labels': {e}"
        ))
    })?;
    let max_count_per_pod = params::float(params, "max_count_per_pod", 0.0)?;
    let baseline = params::float(params, "baseline", 0.0)?;
    let fallback = params::float(params, "fallback", 0.0)?;
    let pods_url = params::string(params, "pods_url", "");
    let pods_metric = params::string(params, "pods_metric", "");
    let pods_labels = params::string_map(params, "pods_labels").map_err(|e| {
        error(format!(
            "endpoint-scrape gate failed to parse 'pods_labels': {e}"
        ))
    })?;
    let pods = (!pods_url.is_empty() && !pods_metric.is_empty()).then_some(Series {
        url: pods_url,
        metric: pods_metric,
        labels: pods_labels,
    });
    tracing::info!(gate_type = TYPE, %url, %metric, max_count_per_pod, "metric gate built");
    Ok(MetricGate {
        gate_type: TYPE,
        source: Source::Scrape(ScrapeSource {
            http: http_client().map_err(error)?,
            series: Series {
                url,
                metric,
                labels,
            },
            max_count_per_pod,
            pods,
            cache: SourceCache::new(env.prometheus_cache_ttl),
        }),
        core: MetricCore::new(baseline, fallback, &GateOwner::default(), ""),
    })
}
