//! Building the metric gates from `gate_params`: one constructor per type, with its defaults and the checks Go makes, in Go's words.

use super::cache::SourceCache;
use super::formula::MetricCore;
use super::prometheus::PrometheusClient;
use super::promql;
use super::scrape::{ScrapeSource, Series, http_client};
use super::source::{MetricGate, QuerySource, Source};
use crate::gate::contract::{GateConfigError, GateOwner};
use crate::gate::nested::{Built, GateBuild};
use crate::gate::params::{Params, go_float};
use std::collections::BTreeMap;
use std::sync::Arc;

fn error(text: impl Into<String>) -> GateConfigError {
    GateConfigError(text.into())
}

/// One Prometheus gate being built: its type, its params, what it is built
/// under, and the server of `--prometheus-url` it queries.
struct Prometheus<'a> {
    build: &'a GateBuild<'a>,
    params: Params<'a>,
    client: Arc<PrometheusClient>,
}

impl<'a> Prometheus<'a> {
    /// Refuses a gate without `--prometheus-url`, which these gates require.
    fn new(build: &'a GateBuild<'a>) -> Result<Self, GateConfigError> {
        let url = build.env.prometheus_url.as_deref().unwrap_or_default();
        if url.is_empty() {
            return Err(error(format!(
                "{} gate type requires --prometheus-url flag to be set",
                build.params.gate
            )));
        }
        let client = PrometheusClient::new(url).map(Arc::new).map_err(error)?;
        let params = build.params;
        Ok(Prometheus {
            build,
            params,
            client,
        })
    }

    /// `pool`, which the gate's PromQL needs (`missing` is the error
    /// without it), and `namespace`.
    fn pool(&self, missing: &str) -> Result<(String, String), GateConfigError> {
        let pool = self.params.text("pool", "");
        if pool.is_empty() {
            return Err(error(missing));
        }
        Ok((pool, self.params.text("namespace", "")))
    }

    fn source(&self, query: String) -> QuerySource {
        QuerySource {
            client: self.client.clone(),
            query,
            cache: SourceCache::new(self.build.env.prometheus_cache_ttl),
        }
    }

    /// The gate over `source`, T = `threshold`, its gauges labelled `pool`.
    fn gate(&self, source: Source, threshold: f64, fallback: f64, pool: &str) -> Built {
        Ok(Arc::new(MetricGate {
            gate_type: self.params.gate,
            source,
            core: MetricCore::new(threshold, fallback, self.build.owner, pool),
        }))
    }
}

/// `prometheus-saturation`: D = 1 − saturation, T = 1 − `threshold`, and
/// `fallback` is a saturation too, so the default fails open.
pub fn saturation(build: &GateBuild) -> Built {
    let gate = Prometheus::new(build)?;
    let (pool, namespace) = gate.pool("inference pool name is required for saturation PromQL")?;
    let threshold = gate.params.get("threshold", 0.8)?;
    let fallback = gate.params.get("fallback", 0.0)?;
    let query = promql::saturation(&pool, &namespace);
    tracing::info!(gate_type = gate.params.gate, %pool, %query, "metric gate built");
    let source = Source::Query(gate.source(query));
    gate.gate(source, 1.0 - threshold, 1.0 - fallback, &pool)
}

/// `prometheus-budget`: the three-query cascade against `max_concurrency`
/// per ready pod, T = `baseline`.
pub fn budget(build: &GateBuild) -> Built {
    let gate = Prometheus::new(build)?;
    let (pool, namespace) =
        gate.pool("inference pool name is required for prometheus-budget gate")?;
    let max_concurrency = gate.params.get("max_concurrency", 100.0)?;
    if max_concurrency.is_nan() || max_concurrency <= 0.0 {
        return Err(error(format!(
            "max_concurrency must be positive, got {}",
            go_float(max_concurrency)
        )));
    }
    let baseline = gate.params.get("baseline", 0.05)?;
    if !(0.0..1.0).contains(&baseline) {
        return Err(error(format!(
            "baseline must be in [0, 1), got {}",
            go_float(baseline)
        )));
    }
    let fallback = gate.params.get("fallback", 0.0)?;
    let queries = promql::budget_cascade(&pool, &namespace, max_concurrency);
    for (index, query) in queries.iter().enumerate() {
        tracing::info!(gate_type = gate.params.gate, %pool, index, %query, "metric gate source");
    }
    tracing::info!(
        gate_type = gate.params.gate,
        %pool,
        closes_at_load_per_ready_pod = max_concurrency * (1.0 - baseline),
        "metric gate built"
    );
    let source = Source::Cascade(queries.into_iter().map(|q| gate.source(q)).collect());
    gate.gate(source, baseline, fallback, &pool)
}

/// `prometheus-query`: any PromQL, sent verbatim, T = 0; `pool` only
/// labels the gauges.
pub fn query(build: &GateBuild) -> Built {
    let gate = Prometheus::new(build)?;
    let query = gate.params.text("query", "");
    if query.is_empty() {
        return Err(error(
            "prometheus-query gate requires a 'query' parameter with a PromQL expression",
        ));
    }
    let fallback = gate.params.get("fallback", 0.0)?;
    let pool = gate.params.text("pool", "");
    tracing::info!(gate_type = gate.params.gate, %pool, %query, "metric gate built");
    let source = Source::Query(gate.source(query));
    gate.gate(source, 0.0, fallback, &pool)
}

/// `endpoint-scrape`: a scraped sample over its maximum, T = `baseline`.
/// It has no owner: its gauges carry empty labels, one series shared by
/// every such gate.
pub fn endpoint_scrape(build: &GateBuild) -> Built {
    let params = build.params;
    let url = params.text("url", "");
    if url.is_empty() {
        return Err(error("endpoint-scrape gate requires a 'url' parameter"));
    }
    let metric = params.text("metric", "");
    if metric.is_empty() {
        return Err(error("endpoint-scrape gate requires a 'metric' parameter"));
    }
    let labels = params.get("labels", BTreeMap::new())?;
    let max_count_per_pod = params.get("max_count_per_pod", 0.0)?;
    let baseline = params.get("baseline", 0.0)?;
    let fallback = params.get("fallback", 0.0)?;
    let pods_url = params.text("pods_url", "");
    let pods_metric = params.text("pods_metric", "");
    let pods_labels = params.get("pods_labels", BTreeMap::new())?;
    let pods = (!pods_url.is_empty() && !pods_metric.is_empty()).then_some(Series {
        url: pods_url,
        metric: pods_metric,
        labels: pods_labels,
    });
    tracing::info!(gate_type = params.gate, %url, %metric, max_count_per_pod, "metric gate built");
    Ok(Arc::new(MetricGate {
        gate_type: params.gate,
        source: Source::Scrape(ScrapeSource {
            http: http_client().map_err(error)?,
            series: Series {
                url,
                metric,
                labels,
            },
            max_count_per_pod,
            pods,
            cache: SourceCache::new(build.env.prometheus_cache_ttl),
        }),
        core: MetricCore::new(baseline, fallback, &GateOwner::default(), ""),
    }))
}
