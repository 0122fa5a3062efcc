//! The PromQL the Prometheus gates send, character for character as Go writes it: selectors with sorted keys and Go-quoted values, M in Go's `%g`.

use crate::gate::params::go_float;
use crate::go_duration::go_quote;
use std::collections::BTreeMap;

/// `{k="v",…}`: keys sorted, values quoted as Go's `%q` quotes them; the
/// namespace matcher only when a namespace is set.
fn selector(key: &str, pool: &str, namespace: &str) -> String {
    let mut matchers = BTreeMap::new();
    matchers.insert(key, pool);
    if !namespace.is_empty() {
        matchers.insert("namespace", namespace);
    }
    let matchers: Vec<String> = matchers
        .iter()
        .map(|(k, v)| format!("{k}={}", go_quote(v)))
        .collect();
    format!("{{{}}}", matchers.join(","))
}

/// `prometheus-saturation`'s query: the free fraction of the pool.
pub(crate) fn saturation(pool: &str, namespace: &str) -> String {
    format!(
        "1 - inference_extension_flow_control_pool_saturation{}",
        selector("inference_pool", pool, namespace)
    )
}

/// `prometheus-budget`'s cascade, in the order it is asked: the flow
/// control queue per ready pod, the per-pod queue size, then vLLM's
/// running requests per ready pod; each against M = `max_concurrency`.
pub(crate) fn budget_cascade(pool: &str, namespace: &str, max_concurrency: f64) -> [String; 3] {
    let m = go_float(max_concurrency);
    let by_pool = selector("inference_pool", pool, namespace);
    let by_name = selector("name", pool, namespace);
    [
        format!(
            "1 - (sum by(inference_pool)(inference_extension_flow_control_queue_size{by_pool}) / on() (inference_pool_ready_pods{by_name} * {m}))"
        ),
        format!("1 - (avg by(name)(inference_pool_per_pod_queue_size{by_name}) / {m})"),
        format!(
            "1 - (sum(vllm:num_requests_running{by_pool}) / on() (inference_pool_ready_pods{by_name} * {m}))"
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_saturation_query_adds_the_namespace_only_when_set() {
        assert_eq!(
            saturation("p", ""),
            r#"1 - inference_extension_flow_control_pool_saturation{inference_pool="p"}"#
        );
        assert_eq!(
            saturation("p", "ns"),
            r#"1 - inference_extension_flow_control_pool_saturation{inference_pool="p",namespace="ns"}"#
        );
    }

    #[test]
    fn the_budget_cascade_is_go_s_three_queries_with_m_in_percent_g() {
        let [q0, q1, q2] = budget_cascade("e2e-pool", "", 1.0);
        assert_eq!(
            q0,
            r#"1 - (sum by(inference_pool)(inference_extension_flow_control_queue_size{inference_pool="e2e-pool"}) / on() (inference_pool_ready_pods{name="e2e-pool"} * 1))"#
        );
        assert_eq!(
            q1,
            r#"1 - (avg by(name)(inference_pool_per_pod_queue_size{name="e2e-pool"}) / 1)"#
        );
        assert_eq!(
            q2,
            r#"1 - (sum(vllm:num_requests_running{inference_pool="e2e-pool"}) / on() (inference_pool_ready_pods{name="e2e-pool"} * 1))"#
        );
        let [q0, _, q2] = budget_cascade("p", "ns", 1e6);
        assert!(
            q0.ends_with(r#"(inference_pool_ready_pods{name="p",namespace="ns"} * 1e+06))"#),
            "{q0}"
        );
        assert!(q2.contains(r#"vllm:num_requests_running{inference_pool="p",namespace="ns"}"#));
        assert!(budget_cascade("p", "", 2.5)[1].ends_with("/ 2.5)"));
    }

    #[test]
    fn selector_values_are_go_quoted() {
        assert_eq!(
            saturation(r#"a"b\c"#, ""),
            r#"1 - inference_extension_flow_control_pool_saturation{inference_pool="a\"b\\c"}"#
        );
    }
}
