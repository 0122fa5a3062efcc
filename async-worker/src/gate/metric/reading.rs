//! What a metric source's read gives: a value, no sample, or why not (cached like a value).

use std::sync::Arc;

/// What one read of a source found: the first sample's value, `None` when
/// it answered no sample, or why it could not be read.
pub(crate) type Reading = Result<Option<f64>, SourceError>;

/// Why a metric source could not be read. Cloned into the cache, which
/// keeps failures for the TTL as it keeps values.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SourceError {
    /// The HTTP call itself failed (connect, timeout, body).
    #[error("{context}: {source}")]
    Http {
        context: String,
        #[source]
        source: Arc<reqwest::Error>,
    },
    /// The source answered, but not with a value we can use.
    #[error("{0}")]
    Failed(String),
    /// No source of a cascade answered a sample.
    #[error("all metric sources unavailable")]
    AllUnavailable,
}

impl SourceError {
    /// Wraps a failed HTTP call, saying what it was for (`query <url>`).
    pub(crate) fn http(context: String) -> impl FnOnce(reqwest::Error) -> SourceError {
        move |source| SourceError::Http {
            context,
            source: Arc::new(source),
        }
    }
}
