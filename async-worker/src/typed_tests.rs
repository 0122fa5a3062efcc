//! The typed handler's three endings: a job that does not deserialize, an answer, an error.

use super::*;
use claim_core::wire::Envelope;
use claim_core::{Generation, Member, Score};

#[derive(serde::Deserialize)]
struct Sum {
    terms: Vec<i64>,
}

#[derive(serde::Serialize)]
struct Total {
    total: i64,
}

fn request(payload: serde_json::Value) -> Request {
    let bytes = Envelope::new("job-1", "token-1", 4_000_000_000, payload).to_bytes();
    let parsed = claim_core::wire::parse_member(&bytes).expect("a producer's member parses");
    Request {
        queue_id: "sums".into(),
        queue_name: "sums".into(),
        generation: Generation::new("job-1", "token-1"),
        member: Member::from(bytes),
        score: Score(4_000_000_000.0),
        deadline: Millis(parsed.deadline as u64 * 1000),
        parsed,
        redeliveries: 0,
    }
}

fn summing() -> impl Handler {
    handler_fn(|job: Sum, cx: JobContext| async move {
        if job.terms.is_empty() {
            return Err(format!("{}: nothing to add", cx.id));
        }
        Ok(Total {
            total: job.terms.iter().sum(),
        })
    })
}

#[tokio::test]
async fn an_answer_is_serialized_into_a_success_record_with_status_200() {
    let outcome = summing()
        .handle(
            &request(serde_json::json!({"terms": [1, 2, 3]})),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(
        outcome,
        HandlerOutcome::Success {
            status: 200,
            body: r#"{"total":6}"#.into()
        }
    );
}

#[tokio::test]
async fn a_payload_that_does_not_match_the_job_type_gets_invalid_request_naming_the_serde_error() {
    let outcome = summing()
        .handle(
            &request(serde_json::json!({"terms": "many"})),
            CancellationToken::new(),
        )
        .await;
    let HandlerOutcome::Error { code, message, .. } = outcome else {
        panic!("expected an error record, got {outcome:?}");
    };
    assert_eq!(code, ErrorCode::InvalidRequest);
    assert!(message.contains("Sum"), "{message}");
    assert!(message.contains("invalid type"), "{message}");
}

#[tokio::test]
async fn an_error_the_function_returns_becomes_an_inference_error_record_with_its_message() {
    let outcome = summing()
        .handle(
            &request(serde_json::json!({"terms": []})),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(
        outcome,
        HandlerOutcome::error(ErrorCode::InferenceError, "job-1: nothing to add")
    );
}
