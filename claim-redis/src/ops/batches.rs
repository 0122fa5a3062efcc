//! The loop batched operations share: the items in chunks of [`MAX_BATCH`], one call per chunk, the answers in item order; a failing call ends it with its error.

use crate::state::MAX_BATCH;
use claim_core::StoreError;
use std::future::Future;

/// Runs `call` on each chunk of at most [`MAX_BATCH`] of `items`, in
/// order, and answers every chunk's answers in one list; the first error
/// is returned (later chunks are not sent).
pub(crate) async fn in_batches<'a, T, R, F, Fut>(
    items: &'a [T],
    mut call: F,
) -> Result<Vec<R>, StoreError>
where
    F: FnMut(&'a [T]) -> Fut,
    Fut: Future<Output = Result<Vec<R>, StoreError>>,
{
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(MAX_BATCH) {
        out.extend(call(chunk).await?);
    }
    Ok(out)
}
