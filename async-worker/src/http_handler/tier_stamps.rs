//! `tier-priority`'s headers, parsed once when the handler is built: for each of the six lanes, the priority and lane-objective headers its requests carry.

use crate::merge_policy::{LANES, TierPriority};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::collections::BTreeMap;

/// One lane's headers, or why they cannot be sent (a configured objective
/// that is not a header value: each request of that lane is refused with it).
type LaneHeaders = Result<Vec<(HeaderName, HeaderValue)>, String>;

/// The policy's lane rule and each lane's headers, ready to insert.
#[derive(Debug, Clone)]
pub struct TierStamps {
    tiers: TierPriority,
    lanes: Vec<LaneHeaders>,
}

impl TierStamps {
    pub fn new(tiers: &TierPriority) -> Self {
        let lanes = (0..LANES).map(|lane| parsed(tiers.headers(lane))).collect();
        TierStamps {
            tiers: tiers.clone(),
            lanes,
        }
    }

    /// Inserts the headers of the lane these labels put a request in.
    pub fn stamp(
        &self,
        headers: &mut HeaderMap,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), String> {
        let lane = &self.lanes[self.tiers.lane(labels)];
        for (name, value) in lane.as_ref().map_err(Clone::clone)? {
            headers.insert(name.clone(), value.clone());
        }
        Ok(())
    }
}

fn parsed(headers: Vec<(&str, String)>) -> LaneHeaders {
    headers
        .into_iter()
        .map(|(name, value)| {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("{name:?} is not a valid HTTP header name"))?;
            let value = HeaderValue::from_str(&value)
                .map_err(|_| format!("lane objective {value:?} is not a valid header value"))?;
            Ok((name, value))
        })
        .collect()
}
