//! Request merge policies (`--request-merge-policy-config-file`): how a pool's queues share its workers, and the headers a policy stamps (fairness, tier priority, lane objective).
//!
//! The file is Go's: `{"type": "random-robin" | "tier-priority",
//! "parameters": {…}}`. Unknown top-level keys are refused; parameters are
//! read leniently, as `gate_params` are ([`crate::gate::params`]). No file
//! means `random-robin` with fairness on.
//!
//! `tier-priority` sorts claimed requests into six lanes: lane = 3 × (0 if
//! the request's `classification` label is `reserved`, else 1) + (0 for
//! tier `interactive`, 1 for `async`, 2 for anything else), and a pool
//! serves the lowest non-empty lane first. The lane number goes out as the
//! priority header; a lane named in `lane_objectives`
//! (`reserved-interactive` … `overflow-batch`) sets the objective header.

use crate::gate::params;
use serde_json::Value;
use std::collections::BTreeMap;

/// Go's default headers and label of `tier-priority`.
pub const PRIORITY_HEADER: &str = "x-gateway-priority";
pub const LANE_OBJECTIVE_HEADER: &str = "x-llm-d-inference-objective";
pub const TIER_LABEL: &str = "tier";
/// Lanes of `tier-priority`, 0 served first.
pub const LANES: usize = 6;

/// The fairness stamp a policy asks for, as written: the header (`None`
/// when the key is absent, which keeps Go's default; `""` turns stamping
/// off) and the metadata attribute (`None` or `""`: `userid`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FairnessParams {
    pub header: Option<String>,
    pub attribute: Option<String>,
}

/// The policy a pool's dispatch follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergePolicy {
    /// Any ready queue, uniformly at random.
    RandomRobin { fairness: FairnessParams },
    /// Six lanes by classification and tier; see the module docs.
    TierPriority(TierPriority),
}

impl Default for MergePolicy {
    fn default() -> Self {
        MergePolicy::RandomRobin {
            fairness: FairnessParams::default(),
        }
    }
}

/// `tier-priority`'s parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierPriority {
    /// Carries the lane number, 0..=5; `None` sends none (`""`).
    pub priority_header: Option<String>,
    pub tier_label: String,
    /// Carries the lane's objective; `None` sends none (`""`).
    pub objective_header: Option<String>,
    /// Lane key (`reserved-interactive` …) to objective.
    pub lane_objectives: BTreeMap<String, String>,
    pub fairness: FairnessParams,
}

impl MergePolicy {
    /// The fairness params, whichever the policy.
    pub fn fairness(&self) -> &FairnessParams {
        match self {
            MergePolicy::RandomRobin { fairness } => fairness,
            MergePolicy::TierPriority(tier) => &tier.fairness,
        }
    }

    /// Reads a policy file's text. The errors are Go's.
    pub fn from_json(text: &str) -> Result<Self, String> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            #[serde(rename = "type")]
            kind: String,
            #[serde(default)]
            parameters: Option<Value>,
        }
        let file: File = serde_json::from_str(text)
            .map_err(|e| format!("failed to unmarshal merge policy config: {e}"))?;
        let parameters = match file.parameters {
            Some(Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        let fairness = FairnessParams {
            header: header_param(&parameters, "fairness_header", None)?,
            attribute: parameters
                .get("fairness_attribute")
                .map(|_| params::string(&parameters, "fairness_attribute", "")),
        };
        match file.kind.as_str() {
            "random-robin" => Ok(MergePolicy::RandomRobin { fairness }),
            "tier-priority" => Ok(MergePolicy::TierPriority(TierPriority {
                priority_header: header_param(
                    &parameters,
                    "priority_header",
                    Some(PRIORITY_HEADER),
                )?,
                tier_label: params::string(&parameters, "tier_label", TIER_LABEL),
                objective_header: header_param(
                    &parameters,
                    "objective_header",
                    Some(LANE_OBJECTIVE_HEADER),
                )?,
                lane_objectives: params::string_map(&parameters, "lane_objectives")
                    .map_err(|e| format!("tier-priority failed to parse 'lane_objectives': {e}"))?,
                fairness,
            })),
            other => Err(format!("unknown request merge policy type: {other}")),
        }
    }
}

/// A header-name param: absent is `default`; `""` is none (for the
/// fairness header, absent keeps Go's default, which the stamp applies);
/// a name that is not an HTTP token is refused.
fn header_param(
    parameters: &serde_json::Map<String, Value>,
    key: &str,
    default: Option<&str>,
) -> Result<Option<String>, String> {
    if parameters.get(key).is_none_or(Value::is_null) {
        return Ok(default.map(str::to_owned));
    }
    let name = params::string(parameters, key, "");
    if !name.is_empty() && !is_header_name(&name) {
        return Err(format!("{key} {name:?} is not a legal HTTP header name"));
    }
    Ok(Some(name))
}

/// An HTTP header name: one or more token characters (RFC 9110 §5.6.2).
pub fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl TierPriority {
    /// The lane of a request with these labels (see the module docs).
    pub fn lane(&self, labels: &BTreeMap<String, String>) -> usize {
        lane_of(labels, &self.tier_label)
    }

    /// The headers the policy adds for a request in `lane`, in order:
    /// priority, then the lane's objective when one is configured.
    pub fn headers(&self, lane: usize) -> Vec<(&str, String)> {
        let mut out = Vec::with_capacity(2);
        if let Some(name) = self.priority_header.as_deref().filter(|n| !n.is_empty()) {
            out.push((name, lane.to_string()));
        }
        if let Some(name) = self.objective_header.as_deref().filter(|n| !n.is_empty())
            && let Some(objective) = self
                .lane_objectives
                .get(lane_key(lane))
                .filter(|o| !o.is_empty())
        {
            out.push((name, objective.clone()));
        }
        out
    }
}

/// The lane of a request with these labels, its tier read from
/// `tier_label` (see the module docs); the `aimd` gate keeps one band per
/// lane, ranked the same way.
pub fn lane_of(labels: &BTreeMap<String, String>, tier_label: &str) -> usize {
    let reserved = labels.get("classification").map(String::as_str) == Some("reserved");
    let tier = match labels.get(tier_label).map(String::as_str) {
        Some("interactive") => 0,
        Some("async") => 1,
        _ => 2,
    };
    3 * usize::from(!reserved) + tier
}

/// `reserved-interactive`, `reserved-async`, `reserved-batch`,
/// `overflow-interactive`, `overflow-async`, `overflow-batch`.
pub fn lane_key(lane: usize) -> &'static str {
    const KEYS: [&str; LANES] = [
        "reserved-interactive",
        "reserved-async",
        "reserved-batch",
        "overflow-interactive",
        "overflow-async",
        "overflow-batch",
    ];
    KEYS[lane.min(LANES - 1)]
}

#[cfg(test)]
#[path = "merge_policy_tests.rs"]
mod tests;
