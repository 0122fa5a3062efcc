//! The gateway retry delay (Go's exponential backoff with equal jitter) and the `Retry-After` reader.

use rand::Rng;
use std::time::{Duration, SystemTime};

/// Exponential backoff with equal jitter, as Go's processor computes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    pub base: Duration,
    pub cap: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base: Duration::from_secs(2),
            cap: Duration::from_secs(60),
        }
    }
}

impl Backoff {
    /// The delay before retry number `retry_count + 1`, strictly inside `time_left`.
    pub fn delay(
        &self,
        retry_count: u32,
        retry_after: Option<Duration>,
        time_left: Duration,
        rng: &mut impl Rng,
    ) -> Duration {
        let left = time_left.as_secs_f64();
        let exponent = retry_count.saturating_add(1).min(60) as i32;
        let step = (self.base.as_secs_f64() * 2f64.powi(exponent))
            .min(self.cap.as_secs_f64())
            .min(left);
        let mut secs = step / 2.0 + rng.random::<f64>() * step / 2.0;
        if let Some(after) = retry_after.map(|a| a.as_secs_f64()).filter(|a| *a > secs) {
            let clamped = after.min(left / 2.0);
            secs = secs.max(clamped * (1.0 + rng.random::<f64>() / 4.0));
        }
        Duration::from_secs_f64(secs.max(0.0))
    }
}

/// Reads `Retry-After`: whole seconds, or an HTTP date (time until it, zero if past).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(SystemTime::now()).unwrap_or_default())
}
