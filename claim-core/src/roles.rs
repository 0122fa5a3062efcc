//! `Store`: every role of a store at once (worker, producer, operator), for code that plays them all: tests, the conformance fixture, the demo.
//!
//! The runtime asks only [`ClaimStore`] (and what it inspects), a producer
//! only [`ClaimProducer`], an operator [`ClaimAdmin`]; each takes the
//! narrowest. `Store` names the three together, and every type that has
//! them is one.

use crate::admin::ClaimAdmin;
use crate::producer::ClaimProducer;
use crate::store::ClaimStore;

/// A store in every role. See the module docs.
pub trait Store: ClaimStore + ClaimProducer + ClaimAdmin {}

impl<S: ClaimStore + ClaimProducer + ClaimAdmin + ?Sized> Store for S {}
