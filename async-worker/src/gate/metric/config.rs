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
    let prometheus = |gate_type| Prometheus::new(gate_type, params, owner, env);
    let gate = match gate_type {
        "prometheus-saturation" => saturation(prometheus("prometheus-saturation")?)?,
        "prometheus-budget" => budget(prometheus("prometheus-budget")?)?,
        "prometheus-query" => query(prometheus("prometheus-query")?)?,
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

/// One Prometheus gate being built: its type, its params, what it is built
/// under, and the server of `--prometheus-url` it queries.
struct Prometheus<'a> {
    gate_type: &'static str,
    params: &'a GateParams,
    owner: &'a GateOwner,
    env: &'a GateEnv,
    client: Arc<PrometheusClient>,
}

impl<'a> Prometheus<'a> {
    /// Refuses a gate without `--prometheus-url`, which these gates require.
    fn new(
        gate_type: &'static str,
        params: &'a GateParams,
        owner: &'a GateOwner,
        env: &'a GateEnv,
    ) -> Result<Self, GateConfigError> {
        let url = env.prometheus_url.as_deref().unwrap_or_default();
        if url.is_empty() {
            return Err(error(format!(
                "{gate_type} gate type requires --prometheus-url flag to be set"
            )));
        }
        let client = PrometheusClient::new(url).map(Arc::new).map_err(error)?;
        Ok(Prometheus {
            gate_type,
            params,
            owner,
            env,
            client,
        })
    }

    /// `pool`, which the gate's PromQL needs (`missing` is the error
    /// without it), and `namespace`.
    fn pool(&self, missing: &str) -> Result<(String, String), GateConfigError> {
        let pool = params::string(self.params, "pool", "");
        if pool.is_empty() {
            return Err(error(missing));
        }
        Ok((pool, params::string(self.params, "namespace", "")))
    }

    fn float(&self, key: &str, default: f64) -> Result<f64, GateConfigError> {
        params::float(self.params, key, default)
    }

    fn source(&self, query: String) -> QuerySource {
        QuerySource {
            client: self.client.clone(),
            query,
            cache: SourceCache::new(self.env.prometheus_cache_ttl),
        }
    }

    /// The gate over `source`, T = `threshold`, its gauges labelled `pool`.
    fn gate(&self, source: Source, threshold: f64, fallback: f64, pool: &str) -> MetricGate {
        MetricGate {
            gate_type: self.gate_type,
            source,
            core: MetricCore::new(threshold, fallback, self.owner, pool),
        }
    }
}

/// `prometheus-saturation`: D = 1 − saturation, T = 1 − `threshold`, and
/// `fallback` is a saturation too, so the default fails open.
fn saturation(gate: Prometheus) -> Result<MetricGate, GateConfigError> {
    let (pool, namespace) = gate.pool("inference pool name is required for saturation PromQL")?;
    let threshold = gate.float("threshold", 0.8)?;
    let fallback = gate.float("fallback", 0.0)?;
    let query = promql::saturation(&pool, &namespace);
    tracing::info!(gate_type = gate.gate_type, %pool, %query, "metric gate built");
    let source = Source::Query(gate.source(query));
    Ok(gate.gate(source, 1.0 - threshold, 1.0 - fallback, &pool))
}

/// `prometheus-budget`: the three-query cascade against `max_concurrency`
/// per ready pod, T = `baseline`.
fn budget(gate: Prometheus) -> Result<MetricGate, GateConfigError> {
    let (pool, namespace) =
        gate.pool("inference pool name is required for prometheus-budget gate")?;
    let max_concurrency = gate.float("max_concurrency", 100.0)?;
    if max_concurrency.is_nan() || max_concurrency <= 0.0 {
        return Err(error(format!(
            "max_concurrency must be positive, got {}",
            go_float(max_concurrency)
        )));
    }
    let baseline = gate.float("baseline", 0.05)?;
    if !(0.0..1.0).contains(&baseline) {
        return Err(error(format!(
            "baseline must be in [0, 1), got {}",
            go_float(baseline)
        )));
    }
    let fallback = gate.float("fallback", 0.0)?;
    let queries = promql::budget_cascade(&pool, &namespace, max_concurrency);
    for (index, query) in queries.iter().enumerate() {
        tracing::info!(gate_type = gate.gate_type, %pool, index, %query, "metric gate source");
    }
    tracing::info!(
        gate_type = gate.gate_type,
        %pool,
        closes_at_load_per_ready_pod = max_concurrency * (1.0 - baseline),
        "metric gate built"
    );
    let source = Source::Cascade(queries.into_iter().map(|q| gate.source(q)).collect());
    Ok(gate.gate(source, baseline, fallback, &pool))
}

/// `prometheus-query`: any PromQL, sent verbatim, T = 0; `pool` only
/// labels the gauges.
fn query(gate: Prometheus) -> Result<MetricGate, GateConfigError> {
    let query = params::string(gate.params, "query", "");
    if query.is_empty() {
        return Err(error(
            "prometheus-query gate requires a 'query' parameter with a PromQL expression",
        ));
    }
    let fallback = gate.float("fallback", 0.0)?;
    let pool = params::string(gate.params, "pool", "");
    tracing::info!(gate_type = gate.gate_type, %pool, %query, "metric gate built");
    let source = Source::Query(gate.source(query));
    Ok(gate.gate(source, 0.0, fallback, &pool))
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
