//! The producer's side of the world: valid, invalid and unparsable members submitted as a producer does.

use super::{Kind, Q, Submitted, World};
use crate::reference::{Act, GateScripts};
use claim_conformance::CheckedStore;
use claim_core::store::Submission;
use claim_core::{Generation, Member, Millis};

impl<S: CheckedStore + Clone> World<S> {
    pub async fn submit(&mut self, deadline_in: i64, script: Vec<Act>, gates: &GateScripts) {
        let n = self.requests.len();
        let generation = Generation::new(format!("r{n}"), format!("t{n}"));
        let deadline = (self.now().0 / 1000) as i64 + deadline_in;
        let value = serde_json::json!({
            "internal": {"request_token": generation.token, "retry_count": 0},
            "request_kind": "redis",
            "data": {"id": generation.id, "created": deadline - 600, "deadline": deadline,
                     "payload": {"model": "m", "prompt": format!("prompt {n}")}},
        });
        self.handler.script(&generation.id, script);
        self.gates.script(&generation.id, gates);
        self.submit_member(generation, value.to_string(), deadline, Kind::Valid)
            .await;
    }

    /// A member with an invalid deadline, or one that is not a request.
    pub async fn submit_bad(&mut self, garbage: bool) {
        let n = self.requests.len();
        let generation = Generation::new(format!("r{n}"), format!("t{n}"));
        let text = if garbage {
            format!("not a request #{n}")
        } else {
            serde_json::json!({
                "internal": {"request_token": generation.token},
                "request_kind": "redis",
                "data": {"id": generation.id, "deadline": "soon", "payload": {}},
            })
            .to_string()
        };
        let deadline = (self.now().0 / 1000) as i64 + 60;
        let kind = if garbage {
            Kind::Garbage
        } else {
            Kind::Invalid
        };
        self.submit_member(generation, text, deadline, kind).await;
    }

    /// Submits `text` as the member of `generation` (deadline in Unix
    /// seconds) the way a producer does, and remembers it as `kind`.
    async fn submit_member(
        &mut self,
        generation: Generation,
        text: String,
        deadline: i64,
        kind: Kind,
    ) {
        let submission = Submission {
            member: Member::from(text.into_bytes()),
            generation: generation.clone(),
            deadline,
            payload: None,
        };
        self.base
            .submit(Q, &submission)
            .await
            .expect("producer submit");
        self.requests.push(Submitted {
            generation,
            deadline: Millis(deadline.max(0) as u64 * 1000),
            kind,
            member: submission.member,
        });
    }
}
