//! Tests of the transform config file and of `gcs_uri_multipart` through it.

use super::*;

fn gcs() -> Transforms {
    Transforms::from_json(
        r#"{"requestTransforms":[{"name":"audio","type":"gcs_uri_multipart","parameters":{"providers":["vertex"]}}]}"#,
    )
    .unwrap()
}

fn input<'a>(
    payload: &'a str,
    metadata: &'a BTreeMap<String, String>,
    deadline_secs: i64,
) -> TransformInput<'a> {
    TransformInput {
        payload,
        metadata,
        deadline_secs,
    }
}

fn vertex() -> BTreeMap<String, String> {
    BTreeMap::from([("provider".to_owned(), "vertex".to_owned())])
}

#[test]
fn an_empty_file_or_list_means_no_transforms() {
    assert!(Transforms::from_json("{}").unwrap().is_empty());
    assert!(
        Transforms::from_json(r#"{"requestTransforms":[]}"#)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn the_file_refuses_unknown_keys_empty_or_repeated_names_and_unknown_types() {
    let cases = [
        (
            r#"{"transforms":[]}"#,
            "failed to unmarshal transform config: unknown field `transforms`",
        ),
        (
            r#"{"requestTransforms":[{"name":"","type":"gcs_uri_multipart"}]}"#,
            "request transform at index 0 has an empty name",
        ),
        (
            r#"{"requestTransforms":[{"name":"a","type":"gcs_uri_multipart","parameters":{"providers":["p"]}},{"name":"a","type":"gcs_uri_multipart","parameters":{"providers":["p"]}}]}"#,
            "duplicate request transform name \"a\"",
        ),
        (
            r#"{"requestTransforms":[{"name":"a","type":"zip"}]}"#,
            "request transform \"a\": unknown type \"zip\"",
        ),
        (
            r#"{"requestTransforms":[{"name":"a","type":"tier-priority"}]}"#,
            "is a request merge policy, not a request transform",
        ),
        (
            r#"{"requestTransforms":[{"name":"a","type":"gcs_uri_multipart","parameters":{"providers":[]}}]}"#,
            "needs a non-empty 'providers' list",
        ),
        (
            r#"{"requestTransforms":[{"name":"a","type":"gcs_uri_multipart","parameters":{"providers":["p"],"x":1}}]}"#,
            "unknown field `x`",
        ),
    ];
    for (text, wanted) in cases {
        let error = Transforms::from_json(text).unwrap_err();
        assert!(error.contains(wanted), "{text}: {error}");
    }
}

#[test]
fn a_request_of_another_provider_or_without_a_gcs_uri_goes_unchanged() {
    let t = gcs();
    let other = BTreeMap::from([("provider".to_owned(), "openai".to_owned())]);
    let with_uri = r#"{"gcs_uri":"gs://b/o","model":"m"}"#;
    assert_eq!(t.rewrite(input(with_uri, &other, 100)), Ok(None));
    assert_eq!(
        t.rewrite(input(r#"{"model":"m"}"#, &vertex(), 100)),
        Ok(None)
    );
    assert_eq!(
        t.rewrite(input(r#"{"gcs_uri":""}"#, &vertex(), 100)),
        Ok(None)
    );
}

#[test]
fn an_owned_request_becomes_form_data_with_the_uri_as_url() {
    let payload = r#"{"gcs_uri":"gs://b/o","model":"whisper","temperature":0.2}"#;
    let out = gcs()
        .rewrite(input(payload, &vertex(), 100))
        .unwrap()
        .unwrap();
    assert!(
        out.content_type
            .starts_with("multipart/form-data; boundary=")
    );
    let body = String::from_utf8(out.body).unwrap();
    assert!(body.contains("name=\"url\"\r\n\r\ngs://b/o\r\n"), "{body}");
    assert!(body.contains("name=\"model\"\r\n\r\nwhisper\r\n"), "{body}");
    assert!(
        body.contains("name=\"temperature\"\r\n\r\n0.2\r\n"),
        "{body}"
    );
    assert!(!body.contains("gcs_uri"), "{body}");
}

#[test]
fn an_inline_file_beside_the_uri_is_refused_as_an_invalid_request() {
    let payload = r#"{"gcs_uri":"gs://b/o","file_base64":"AAAA"}"#;
    let error = gcs().rewrite(input(payload, &vertex(), 100)).unwrap_err();
    assert!(
        error.starts_with("Failed to transform request body: INVALID_REQ: "),
        "{error}"
    );
}

#[test]
fn a_signed_url_expiring_by_the_deadline_fails_the_check_naming_the_transform() {
    let payload = r#"{"gcs_uri":"https://storage.googleapis.com/b/o?X-Goog-Date=19700101T000000Z&X-Goog-Expires=600"}"#;
    let t = gcs();
    assert_eq!(t.validate(input(payload, &vertex(), 599)), Ok(()));
    let error = t.validate(input(payload, &vertex(), 600)).unwrap_err();
    assert!(
        error.starts_with("Failed to validate request for transform: transform audio/gcs_uri_multipart: INVALID_REQ: "),
        "{error}"
    );
}
