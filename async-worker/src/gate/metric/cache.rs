//! The per-source cache: a reading (a failure too) is kept until query start + TTL, and callers wait for the one query in flight.

use super::reading::Reading;
use std::future::Future;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// One source's last reading and when it expires. A zero TTL reads the
/// source on every call.
#[derive(Debug)]
pub(crate) struct SourceCache {
    ttl: Duration,
    slot: Mutex<Option<(Instant, Reading)>>,
}

impl SourceCache {
    pub(crate) fn new(ttl: Duration) -> Self {
        SourceCache {
            ttl,
            slot: Mutex::new(None),
        }
    }

    /// The cached reading while it is fresh, else `fetch`'s, kept until the
    /// moment `fetch` started plus the TTL. The lock is held across the
    /// fetch, so concurrent callers share one query instead of each
    /// sending their own.
    pub(crate) async fn read(&self, fetch: impl Future<Output = Reading>) -> Reading {
        if self.ttl.is_zero() {
            return fetch.await;
        }
        let mut slot = self.slot.lock().await;
        if let Some((expiry, reading)) = slot.as_ref()
            && Instant::now() < *expiry
        {
            return reading.clone();
        }
        let started = Instant::now();
        let reading = fetch.await;
        *slot = Some((started + self.ttl, reading.clone()));
        reading
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::metric::reading::SourceError;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A source that counts its reads, answers the count, and takes `delay`.
    fn counting(calls: &Arc<AtomicUsize>, delay: Duration) -> impl Future<Output = Reading> {
        let calls = calls.clone();
        async move {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            tokio::time::sleep(delay).await;
            Ok(Some(n as f64))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_reading_is_kept_until_query_start_plus_the_ttl() {
        let cache = SourceCache::new(Duration::from_secs(5));
        let calls = Arc::new(AtomicUsize::new(0));
        // The query takes 2 s, so its reading expires 3 s after it arrives.
        assert_eq!(
            cache
                .read(counting(&calls, Duration::from_secs(2)))
                .await
                .unwrap(),
            Some(1.0)
        );
        tokio::time::advance(Duration::from_millis(2_900)).await;
        assert_eq!(
            cache.read(counting(&calls, Duration::ZERO)).await.unwrap(),
            Some(1.0)
        );
        tokio::time::advance(Duration::from_millis(100)).await;
        assert_eq!(
            cache.read(counting(&calls, Duration::ZERO)).await.unwrap(),
            Some(2.0)
        );
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_is_cached_like_a_value() {
        let cache = SourceCache::new(Duration::from_secs(5));
        let failed = cache
            .read(async { Err(SourceError::Failed("down".into())) })
            .await;
        assert!(failed.is_err());
        let again = cache.read(async { Ok(Some(1.0)) }).await;
        assert_eq!(again.unwrap_err().to_string(), "down");
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(
            cache.read(async { Ok(Some(1.0)) }).await.unwrap(),
            Some(1.0)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_callers_share_the_one_query_in_flight() {
        let cache = Arc::new(SourceCache::new(Duration::from_secs(5)));
        let calls = Arc::new(AtomicUsize::new(0));
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let (cache, calls) = (cache.clone(), calls.clone());
                tokio::spawn(
                    async move { cache.read(counting(&calls, Duration::from_secs(1))).await },
                )
            })
            .collect();
        for reader in readers {
            assert_eq!(reader.await.unwrap().unwrap(), Some(1.0));
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_ttl_reads_the_source_every_time() {
        let cache = SourceCache::new(Duration::ZERO);
        let calls = Arc::new(AtomicUsize::new(0));
        for n in 1..=3 {
            let reading = cache.read(counting(&calls, Duration::ZERO)).await;
            assert_eq!(reading.unwrap(), Some(f64::from(n)));
        }
    }
}
