//! Store wrappers with the forwarding written once: a layer passes every call to the store it wraps unless it overrides it.
//!
//! A wrapper (fault injection, a retrying client, a call counter, a test's
//! tap) implements [`StoreLayer`]: it names the store it wraps and
//! overrides only what it changes. Every `ClaimStore` and `ClaimInspect`
//! method it does not override, and every `ClaimProducer` method when the
//! wrapped store is a producer, forwards to the wrapped store through
//! [`StoreLayer::around`], the one hook that sees every forwarded call with
//! its [`Op`] (OpenDAL's `LayeredAccess`, Materialize's `run_op`). The
//! blanket impls below make every layer a `ClaimStore`, and a
//! `ClaimProducer` over a producer; the conformance suite's `ListReads`
//! forwards the same way (`conformance::lists`).
//!
//! Import `StoreLayer` only where a layer is written: a layer is also a
//! `ClaimStore`, and with both traits in scope a method call on a concrete
//! layer names two methods.

use crate::error::StoreError;
use crate::op::Op;
use crate::producer::ClaimProducer;
use crate::store::{ClaimInspect, ClaimStore, StoreConfig};
pub use async_trait::async_trait;
use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future: what every store method returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A store call in flight: the boxed future of its result, what every
/// forwarded call returns.
pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T, StoreError>>;

/// One forwarded call: each invocation runs the operation once more on the
/// wrapped store (a layer that retries invokes it again).
pub type Forward<'a, T> = dyn Fn() -> StoreFuture<'a, T> + Send + Sync + 'a;

/// Writes [`StoreLayer`] and its blanket impls from the methods of each
/// trait it forwards, each with its [`Op`], so what forwards is listed once.
macro_rules! layer {
    (
        inspect { $( fn $iname:ident($($iarg:ident: $ity:ty),*) -> $iout:ty = $iop:ident; )* }
        worker { $( fn $wname:ident($($warg:ident: $wty:ty),*) -> $wout:ty = $wop:ident; )* }
        producer { $( fn $pname:ident($($parg:ident: $pty:ty),*) -> $pout:ty = $pop:ident; )* }
    ) => {
        /// A store wrapping another: see the module docs.
        ///
        /// Every method has a default that forwards to [`StoreLayer::inner`]
        /// through [`StoreLayer::around`]; the method of the same name on
        /// `ClaimStore`, `ClaimInspect` or `ClaimProducer` calls it. The
        /// producer's methods exist where the wrapped store is a producer.
        #[async_trait]
        pub trait StoreLayer: Send + Sync + std::fmt::Debug + 'static {
            /// The store this layer wraps.
            type Inner: ClaimStore + ?Sized;

            fn inner(&self) -> &Self::Inner;

            /// Every forwarded call passes here: `call` runs `op` on the
            /// inner store, and may be invoked again (a retry) or not at all
            /// (a fault that never reached the store). By default, once.
            fn around<'a, T: Send + 'a>(&'a self, op: Op, call: &'a Forward<'a, T>) -> StoreFuture<'a, T> {
                let _ = op;
                call()
            }

            fn config(&self) -> &StoreConfig {
                self.inner().config()
            }

            $( async fn $iname(&self, $($iarg: $ity),*) -> Result<$iout, StoreError> {
                self.around(Op::$iop, &move || self.inner().$iname($($iarg),*)).await
            } )*

            $( async fn $wname(&self, $($warg: $wty),*) -> Result<$wout, StoreError> {
                self.around(Op::$wop, &move || self.inner().$wname($($warg),*)).await
            } )*

            $( async fn $pname(&self, $($parg: $pty),*) -> Result<$pout, StoreError>
            where
                Self::Inner: ClaimProducer,
            {
                self.around(Op::$pop, &move || self.inner().$pname($($parg),*)).await
            } )*
        }

        #[async_trait]
        #[deny(clippy::missing_trait_methods)]
        impl<L: StoreLayer> ClaimInspect for L {
            $( async fn $iname(&self, $($iarg: $ity),*) -> Result<$iout, StoreError> {
                StoreLayer::$iname(self, $($iarg),*).await
            } )*
        }

        #[async_trait]
        #[deny(clippy::missing_trait_methods)]
        impl<L: StoreLayer> ClaimStore for L {
            fn config(&self) -> &StoreConfig {
                StoreLayer::config(self)
            }

            $( async fn $wname(&self, $($warg: $wty),*) -> Result<$wout, StoreError> {
                StoreLayer::$wname(self, $($warg),*).await
            } )*
        }

        /// `push` is not listed: its default builds the member and calls
        /// `enqueue`, which forwards (through the layer's override, if any).
        #[async_trait]
        impl<L: StoreLayer> ClaimProducer for L
        where
            L::Inner: ClaimProducer,
        {
            $( async fn $pname(&self, $($parg: $pty),*) -> Result<$pout, StoreError> {
                StoreLayer::$pname(self, $($parg),*).await
            } )*
        }
    };
}

layer! {
    inspect {
        fn depths(queue: &str) -> crate::store::QueueDepths = Depths;
        fn retry_depth() -> usize = RetryDepth;
        fn claims(queue: &str) -> Vec<crate::store::ClaimInfo> = Claims;
        fn dead_entries(queue: &str) -> Vec<crate::store::DeadEntry> = DeadEntries;
        fn retry_entries() -> Vec<crate::store::PendingEntry> = RetryEntries;
        fn peek_after(queue: &str, after: crate::Score, limit: usize) -> Vec<crate::store::PendingEntry> = PeekAfter;
        fn is_terminal(generation: &crate::Generation) -> bool = IsTerminal;
        fn list_len(list: &str) -> usize = ListLen;
        fn paused(queue: &str) -> bool = Paused;
    }
    worker {
        fn now() -> crate::Millis = Now;
        fn ping() -> () = Ping;
        fn fetch_payloads(refs: &[String]) -> Vec<Option<crate::Payload>> = FetchPayloads;
        fn peek(queue: &str, offset: usize, limit: usize) -> Vec<crate::store::PendingEntry> = Peek;
        fn claim(holder: crate::Holder<'_>, items: &[crate::store::ClaimRequest]) -> Vec<crate::store::ClaimOutcome> = Claim;
        fn renew(holder: crate::Holder<'_>, generations: &[crate::Generation]) -> Vec<crate::store::RenewOutcome> = Renew;
        fn cancelled(generations: &[crate::Generation]) -> Vec<bool> = Cancelled;
        fn ack(holder: crate::Holder<'_>, items: &[crate::store::AckItem]) -> Vec<crate::store::AckOutcome> = Ack;
        fn release(holder: crate::Holder<'_>, generations: &[crate::Generation]) -> Vec<bool> = Release;
        fn park_retry(holder: crate::Holder<'_>, items: &[crate::store::ParkItem]) -> Vec<bool> = ParkRetry;
        fn promote_due(limit: usize) -> usize = PromoteDue;
        fn reclaim_expired(queue: &str, limit: usize) -> crate::store::ReclaimReport = ReclaimExpired;
        fn dead_letter(queue: &str, member: &crate::Member, reason: &str) -> bool = DeadLetter;
    }
    producer {
        fn submit(queue: &str, submission: &crate::store::Submission) -> () = Submit;
        fn enqueue(queue: &str, submission: &crate::store::Submission) -> crate::Member = Enqueue;
        fn cancel(id: &str) -> bool = Cancel;
    }
}
