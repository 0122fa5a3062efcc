//! Store wrappers with the forwarding written once: a layer passes every call to the store it wraps unless it overrides it.
//!
//! A wrapper (fault injection, a retrying client, a call counter, a test's
//! tap) implements [`StoreLayer`]: it names the store it wraps and
//! overrides only what it changes. Every `ClaimStore` and `ClaimInspect`
//! method it does not override forwards to the wrapped store through
//! [`StoreLayer::around`], the one hook that sees every forwarded call with
//! its [`Op`] (OpenDAL's `LayeredAccess`, Materialize's `run_op`). The
//! blanket impls below make every layer a `ClaimStore`.
//!
//! Import `StoreLayer` only where a layer is written: a layer is also a
//! `ClaimStore`, and with both traits in scope a method call on a concrete
//! layer names two methods.

use crate::error::StoreError;
use crate::op::Op;
use crate::store::{ClaimInspect, ClaimStore, StoreConfig};
pub use async_trait::async_trait;
use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future: what every store method returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a forwarded call answers.
pub type Answer<'a, T> = BoxFuture<'a, Result<T, StoreError>>;

/// One forwarded call: each invocation runs the operation once more on the
/// wrapped store (a layer that retries invokes it again).
pub type Forward<'a, T> = dyn Fn() -> Answer<'a, T> + Send + Sync + 'a;

/// Writes the layer trait and its blanket impls from one list of methods,
/// so the list of what forwards is written once.
macro_rules! layer {
    (
        inspect { $( $(#[$idoc:meta])* fn $iname:ident($($iarg:ident: $ity:ty),*) -> $iout:ty = $iop:ident $([$inow:ident])?; )* }
        store { $( $(#[$sdoc:meta])* fn $sname:ident($($sarg:ident: $sty:ty),*) -> $sout:ty = $sop:ident $([$snow:ident])?; )* }
    ) => {
        /// A store wrapping another: see the module docs.
        ///
        /// Every method has a default that forwards to [`StoreLayer::inner`]
        /// through [`StoreLayer::around`]; the method of the same name on
        /// `ClaimStore` or `ClaimInspect` calls it.
        #[async_trait]
        pub trait StoreLayer: Send + Sync + std::fmt::Debug + 'static {
            /// The store this layer wraps.
            type Inner: ClaimStore + ?Sized;

            fn inner(&self) -> &Self::Inner;

            /// Every forwarded call passes here: `call` runs `op` on the
            /// inner store, and may be invoked again (a retry) or not at all
            /// (a fault that never reached the store). By default, once.
            fn around<'a, T: Send + 'a>(&'a self, op: Op, call: &'a Forward<'a, T>) -> Answer<'a, T> {
                let _ = op;
                call()
            }

            fn config(&self) -> &StoreConfig {
                self.inner().config()
            }

            $( $(#[$idoc])*
            async fn $iname(&self, $($iarg: $ity),*) -> Result<$iout, StoreError> {
                self.around(Op::$iop, &move || self.inner().$iname($($iarg),*)).await
            } )*

            $( $(#[$sdoc])*
            async fn $sname(&self, $($sarg: $sty),*) -> Result<$sout, StoreError> {
                self.around(Op::$sop, &move || self.inner().$sname($($sarg),*)).await
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

            $( async fn $sname(&self, $($sarg: $sty),*) -> Result<$sout, StoreError> {
                StoreLayer::$sname(self, $($sarg),*).await
            } )*
        }
    };
}

/// Calls `$callback! { <extra> inspect { .. } store { .. } }` (the
/// tokens after the callback's name first) with every
/// `ClaimInspect` and `ClaimStore` method but `config`: its name,
/// arguments, answer and [`Op`], and `[now]` where the model's method of
/// that name also takes the time. Forwarding code is generated from this
/// one list: [`StoreLayer`] here, a backend's router (claim-redis routes
/// each method to its `ops` module of the same name, claim-memory to the
/// model's method).
#[macro_export]
macro_rules! store_methods {
    ($callback:ident $($extra:tt)*) => {
        $callback! {
            $($extra)*
            inspect {
                fn depths(queue: &str) -> $crate::store::QueueDepths = Depths;
                fn retry_depth() -> usize = RetryDepth;
                fn claims(queue: &str) -> Vec<$crate::store::ClaimInfo> = Claims;
                fn dead_entries(queue: &str) -> Vec<$crate::store::DeadEntry> = DeadEntries;
                fn retry_entries() -> Vec<$crate::store::PendingEntry> = RetryEntries;
                fn results(list: &str) -> Vec<$crate::Member> = Results;
                fn is_terminal(generation: &$crate::Generation) -> bool = IsTerminal [now];
                fn list_ttl(list: &str) -> Option<u64> = ListTtl;
                fn list_len(list: &str) -> usize = ListLen;
                fn paused(queue: &str) -> bool = Paused;
            }
            store {
                fn now() -> $crate::Millis = Now;
                fn ping() -> () = Ping;
                fn submit(queue: &str, submission: &$crate::store::Submission) -> () = Submit [now];
                fn enqueue(queue: &str, submission: &$crate::store::Submission) -> $crate::Member = Enqueue [now];
                fn fetch_payloads(refs: &[String]) -> Vec<Option<$crate::Member>> = FetchPayloads [now];
                fn cancel(id: &str) -> bool = Cancel [now];
                fn peek(queue: &str, offset: usize, limit: usize) -> Vec<$crate::store::PendingEntry> = Peek;
                fn claim(queue: &str, owner: &$crate::OwnerToken, items: &[$crate::store::ClaimRequest]) -> Vec<$crate::store::ClaimOutcome> = Claim [now];
                fn renew(queue: &str, owner: &$crate::OwnerToken, generations: &[$crate::Generation]) -> Vec<$crate::store::RenewOutcome> = Renew [now];
                fn cancelled(generations: &[$crate::Generation]) -> Vec<bool> = Cancelled [now];
                fn ack(queue: &str, owner: &$crate::OwnerToken, items: &[$crate::store::AckItem]) -> Vec<$crate::store::AckOutcome> = Ack [now];
                fn release(queue: &str, owner: &$crate::OwnerToken, generations: &[$crate::Generation]) -> Vec<bool> = Release [now];
                fn sweep(queue: &str, owner: &$crate::OwnerToken, generations: &[$crate::Generation]) -> Vec<bool> = Sweep [now];
                fn park_retry(queue: &str, owner: &$crate::OwnerToken, items: &[$crate::store::ParkItem]) -> Vec<bool> = ParkRetry [now];
                fn promote_due(limit: usize) -> usize = PromoteDue [now];
                fn reclaim_expired(queue: &str, limit: usize) -> $crate::store::ReclaimReport = ReclaimExpired [now];
                fn dead_letter(queue: &str, member: &$crate::Member, reason: &str) -> bool = DeadLetter [now];
            }
        }
    };
}

store_methods!(layer);

/// Implements `ClaimInspect` and `ClaimStore` for a backend:
/// `store_methods!(route_store Type => config.path, body_macro;)` writes
/// every method as `body_macro!(self, method(args..) [now])` (the `now`
/// marker passed on where the list has it) and `config` as
/// `&self.config.path`.
#[macro_export]
macro_rules! route_store {
    (
        $ty:ty => $($config:ident).+, $body:ident;
        inspect { $( fn $iname:ident($($iarg:ident: $ity:ty),*) -> $iout:ty = $iop:ident $([$inow:ident])?; )* }
        store { $( fn $sname:ident($($sarg:ident: $sty:ty),*) -> $sout:ty = $sop:ident $([$snow:ident])?; )* }
    ) => {
        #[$crate::layer::async_trait]
        impl $crate::ClaimInspect for $ty {
            $( async fn $iname(&self, $($iarg: $ity),*) -> Result<$iout, $crate::StoreError> {
                $body!(self, $iname($($iarg),*) $($inow)?)
            } )*
        }

        #[$crate::layer::async_trait]
        impl $crate::ClaimStore for $ty {
            fn config(&self) -> &$crate::store::StoreConfig {
                &self.$($config).+
            }

            $( async fn $sname(&self, $($sarg: $sty),*) -> Result<$sout, $crate::StoreError> {
                $body!(self, $sname($($sarg),*) $($snow)?)
            } )*
        }
    };
}
