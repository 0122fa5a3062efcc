//! Test doubles for the wrapping gates' tests: a gate that answers what it is told and logs what happens to it, a request to decide, and the factory called as a queue would call it.

use super::contract::{
    DispatchGate, GateConfigError, GateEnv, GateError, GateOwner, GateParams, GateRequest, Release,
    Releases, Verdict,
};
use super::factory;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// What happened to the scripted gates of one test, in order
/// (`apply a`, `release a`).
#[derive(Debug, Clone, Default)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn note(&self, entry: String) {
        self.0.lock().unwrap().push(entry);
    }

    pub fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// A gate with a fixed budget and a fixed answer that may reserve (push a
/// release that notes itself in the log).
#[derive(Debug, Clone)]
pub struct ScriptedGate {
    name: &'static str,
    budget: f64,
    answer: Result<Verdict, &'static str>,
    reserves: bool,
    log: Log,
}

impl ScriptedGate {
    /// Budget 1, continues, reserves nothing.
    pub fn new(name: &'static str, log: &Log) -> Self {
        ScriptedGate {
            name,
            budget: 1.0,
            answer: Ok(Verdict::Continue),
            reserves: false,
            log: log.clone(),
        }
    }

    pub fn budget(mut self, budget: f64) -> Self {
        self.budget = budget;
        self
    }

    pub fn answers(mut self, verdict: Verdict) -> Self {
        self.answer = Ok(verdict);
        self
    }

    pub fn fails(mut self, message: &'static str) -> Self {
        self.answer = Err(message);
        self
    }

    pub fn reserving(mut self) -> Self {
        self.reserves = true;
        self
    }

    pub fn shared(self) -> Arc<dyn DispatchGate> {
        Arc::new(self)
    }
}

#[async_trait::async_trait]
impl DispatchGate for ScriptedGate {
    async fn budget(&self) -> f64 {
        self.budget
    }

    async fn apply(
        &self,
        _request: &mut GateRequest<'_>,
        releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        self.log.note(format!("apply {}", self.name));
        if self.reserves {
            releases.push(noting(&self.log, format!("release {}", self.name)));
        }
        self.answer
            .clone()
            .map_err(|message| GateError::Failed(message.to_owned()))
    }
}

/// A release that notes `entry` in `log` when it runs.
pub fn noting(log: &Log, entry: String) -> Release {
    let log = log.clone();
    Box::new(move || Box::pin(async move { log.note(entry) }))
}

/// The parts of a request a gate reads and labels.
#[derive(Debug, Default)]
pub struct Envelope {
    pub metadata: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
}

impl Envelope {
    /// A request carrying these labels.
    pub fn labelled(labels: &[(&str, &str)]) -> Self {
        Envelope {
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..Envelope::default()
        }
    }

    pub fn request(&mut self) -> GateRequest<'_> {
        GateRequest {
            id: "request-1",
            metadata: &self.metadata,
            labels: &mut self.labels,
        }
    }
}

/// `gate_params` from a JSON object literal.
pub fn params(value: Value) -> GateParams {
    match value {
        Value::Object(map) => map,
        other => panic!("gate_params must be an object, got {other}"),
    }
}

/// The gate the factory builds for a queue (`""`/`none` come back as `None`).
pub fn build(gate_type: &str, value: Value) -> Result<Arc<dyn DispatchGate>, GateConfigError> {
    let owner = GateOwner::queue("q1", "pending-q1", "default");
    factory::build(gate_type, &params(value), &owner, &GateEnv::default())
        .map(|gate| gate.expect("a gate, not \"none\""))
}

/// The startup error the factory gives for this configuration.
pub fn build_error(gate_type: &str, value: Value) -> String {
    match build(gate_type, value) {
        Ok(gate) => panic!("{gate_type} built {gate:?}; expected an error"),
        Err(error) => error.0,
    }
}

/// The startup error the factory gives for each of these configurations.
pub fn build_errors<const N: usize>(gate_type: &str, values: [Value; N]) -> [String; N] {
    values.map(|value| build_error(gate_type, value))
}

/// Waits, a bounded number of scheduler turns, for `done` to hold (a
/// dropped release list runs on a spawned task).
pub async fn eventually(mut done: impl AsyncFnMut() -> bool) -> bool {
    for _ in 0..1000 {
        if done().await {
            return true;
        }
        tokio::task::yield_now().await;
    }
    false
}
