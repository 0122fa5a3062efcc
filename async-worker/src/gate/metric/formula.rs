//! The metric core: a reading and a threshold make a budget (or the fallback), and the three `gate_metric_*` gauges say which it was.

use super::reading::Reading;
use crate::gate::contract::GateOwner;
use crate::metrics::{GATE_METRIC_SOURCE_AVAILABLE, GATE_METRIC_THRESHOLD, GATE_METRIC_VALUE};
use metrics::Label;

/// A metric gate's formula and its gauge series.
#[derive(Debug)]
pub(crate) struct MetricCore {
    threshold: f64,
    fallback: f64,
    labels: Vec<Label>,
}

impl MetricCore {
    /// `fallback` is clamped to [0, 1] here, once. The series is labelled
    /// with the owner and `inference_pool` (the gate's `pool` param).
    pub(crate) fn new(threshold: f64, fallback: f64, owner: &GateOwner, pool: &str) -> Self {
        MetricCore {
            threshold,
            fallback: clamp_unit(fallback),
            labels: vec![
                Label::new("queue_id", owner.queue_id.clone()),
                Label::new("queue_name", owner.queue_name.clone()),
                Label::new("pool_name", owner.pool_name.clone()),
                Label::new("inference_pool", pool.to_owned()),
            ],
        }
    }

    /// The budget for `reading`: 0 when D is at or below the threshold,
    /// else `min(1, D - T)`; the fallback when there is no finite D.
    pub(crate) fn budget(&self, gate_type: &str, reading: &Reading) -> f64 {
        let why = match reading {
            Ok(Some(value)) if value.is_finite() => {
                metrics::gauge!(GATE_METRIC_VALUE, self.labels.clone()).set(*value);
                metrics::gauge!(GATE_METRIC_THRESHOLD, self.labels.clone()).set(self.threshold);
                self.set_available(1.0);
                return formula(*value, self.threshold);
            }
            Ok(Some(value)) => format!("the source answered {value}"),
            Ok(None) => "the source answered no sample".to_owned(),
            Err(error) => error.to_string(),
        };
        self.set_available(0.0);
        tracing::debug!(gate_type, fallback = self.fallback, %why, "metric gate falls back");
        self.fallback
    }

    fn set_available(&self, available: f64) {
        metrics::gauge!(GATE_METRIC_SOURCE_AVAILABLE, self.labels.clone()).set(available);
    }
}

/// 0 when `value` is at or below `threshold`, else the excess, at most 1.
pub(crate) fn formula(value: f64, threshold: f64) -> f64 {
    if value <= threshold {
        0.0
    } else {
        (value - threshold).min(1.0)
    }
}

/// `value` within [0, 1] (NaN stays NaN).
pub(crate) fn clamp_unit(value: f64) -> f64 {
    value.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::metric::reading::SourceError;

    fn core(threshold: f64, fallback: f64) -> MetricCore {
        MetricCore::new(threshold, fallback, &GateOwner::pool("default"), "p")
    }

    #[test]
    fn the_budget_is_zero_at_or_below_the_threshold_and_the_excess_above_it() {
        assert_eq!(formula(0.2, 0.2), 0.0);
        assert_eq!(formula(0.1, 0.2), 0.0);
        assert!((formula(0.7, 0.2) - 0.5).abs() < 1e-12);
        assert_eq!(formula(5.0, 0.0), 1.0);
    }

    #[test]
    fn an_error_no_sample_nan_or_an_infinity_give_the_fallback() {
        let core = core(0.0, 0.25);
        for reading in [
            Err(SourceError::Failed("down".into())),
            Ok(None),
            Ok(Some(f64::NAN)),
            Ok(Some(f64::INFINITY)),
            Ok(Some(f64::NEG_INFINITY)),
        ] {
            assert_eq!(core.budget("t", &reading), 0.25, "{reading:?}");
        }
        assert_eq!(core.budget("t", &Ok(Some(0.5))), 0.5);
    }

    #[test]
    fn the_fallback_is_clamped_to_the_unit_interval() {
        assert_eq!(core(0.0, 7.0).budget("t", &Ok(None)), 1.0);
        assert_eq!(core(0.0, -1.0).budget("t", &Ok(None)), 0.0);
    }

    /// The rendered page after `read` under a recorder of its own.
    #[cfg(feature = "serve")]
    fn rendered(read: impl FnOnce()) -> String {
        let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        metrics::with_local_recorder(&recorder, read);
        handle.render()
    }

    #[cfg(feature = "serve")]
    #[test]
    fn the_gauges_carry_the_owner_and_pool_and_say_whether_the_source_answered() {
        let owner = GateOwner::queue("q1", "q1-set", "batch");
        let core = MetricCore::new(0.25, 0.0, &owner, "e2e-pool");
        let labels =
            r#"{queue_id="q1",queue_name="q1-set",pool_name="batch",inference_pool="e2e-pool"}"#;
        let page = rendered(|| {
            core.budget("t", &Ok(Some(0.75)));
        });
        for (name, value) in [
            (GATE_METRIC_VALUE, "0.75"),
            (GATE_METRIC_THRESHOLD, "0.25"),
            (GATE_METRIC_SOURCE_AVAILABLE, "1"),
        ] {
            assert!(page.contains(&format!("{name}{labels} {value}")), "{page}");
        }
        let page = rendered(|| {
            core.budget("t", &Ok(None));
        });
        let unavailable = format!("{GATE_METRIC_SOURCE_AVAILABLE}{labels} 0");
        assert!(page.contains(&unavailable), "{page}");
        assert!(!page.contains(GATE_METRIC_VALUE), "{page}");
    }

    #[cfg(feature = "serve")]
    #[test]
    fn an_ownerless_gate_has_one_series_with_every_label_empty() {
        let core = MetricCore::new(0.0, 0.0, &GateOwner::default(), "");
        let page = rendered(|| {
            core.budget("t", &Ok(Some(0.5)));
        });
        let labels = r#"{queue_id="",queue_name="",pool_name="",inference_pool=""}"#;
        assert!(
            page.contains(&format!("{GATE_METRIC_VALUE}{labels} 0.5")),
            "{page}"
        );
    }
}
