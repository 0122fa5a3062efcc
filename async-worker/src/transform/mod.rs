//! Request body transforms (`--transform-config-file`): checks run on every request before it is sent, and the first transform that owns a request rewrites its body.
//!
//! The file is Go's: `{"requestTransforms": [{"name", "type",
//! "parameters"}]}`, unknown top-level keys refused, names non-empty and
//! unique, types known. The one built-in type is [`gcs::GCS_URI_MULTIPART`].
//!
//! A failed check or rewrite ends the request `INVALID_REQUEST` and is
//! never retried: the same body would fail the same way.

pub mod gcs;
mod multipart;

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};

/// A payload's top-level fields.
type Fields = serde_json::Map<String, serde_json::Value>;

/// A request's payload fields, parsed on first use by whichever transform
/// owns it (`None`: not a JSON object), then shared by its check and its
/// rewrite.
type PayloadFields = OnceCell<Option<Fields>>;

/// A rewritten body and its content type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    pub content_type: String,
    pub body: Vec<u8>,
}

/// What a transform reads of a request.
#[derive(Debug, Clone, Copy)]
pub struct TransformInput<'a> {
    /// The payload, JSON text.
    pub payload: &'a str,
    /// `data.metadata`.
    pub metadata: &'a BTreeMap<String, String>,
    /// The request's deadline, Unix seconds.
    pub deadline_secs: i64,
}

/// One configured transform.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    GcsUriMultipart(gcs::GcsUriMultipart),
}

impl Kind {
    fn type_name(&self) -> &'static str {
        match self {
            Kind::GcsUriMultipart(_) => gcs::GCS_URI_MULTIPART,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Named {
    name: String,
    kind: Kind,
}

/// The configured transforms, in file order; empty when there is no file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transforms {
    list: Vec<Named>,
}

impl Transforms {
    /// Reads a transform config file's text; the error names what to fix.
    pub fn from_json(text: &str) -> Result<Self, String> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            #[serde(default, rename = "requestTransforms")]
            request_transforms: Vec<Entry>,
        }
        #[derive(serde::Deserialize)]
        struct Entry {
            #[serde(default)]
            name: String,
            #[serde(default, rename = "type")]
            kind: String,
            #[serde(default)]
            parameters: Option<serde_json::Value>,
        }
        let file: File = serde_json::from_str(text)
            .map_err(|e| format!("failed to unmarshal transform config: {e}"))?;
        let mut names = BTreeSet::new();
        let mut list = Vec::with_capacity(file.request_transforms.len());
        for (index, entry) in file.request_transforms.into_iter().enumerate() {
            if entry.name.is_empty() {
                return Err(format!(
                    "request transform at index {index} has an empty name"
                ));
            }
            if !names.insert(entry.name.clone()) {
                return Err(format!("duplicate request transform name {:?}", entry.name));
            }
            let parameters = entry.parameters.unwrap_or(serde_json::Value::Null);
            let kind = match entry.kind.as_str() {
                gcs::GCS_URI_MULTIPART => Kind::GcsUriMultipart(
                    gcs::GcsUriMultipart::from_params(&parameters)
                        .map_err(|e| format!("request transform {:?}: {e}", entry.name))?,
                ),
                "random-robin" | "tier-priority" => {
                    return Err(format!(
                        "request transform {:?}: type {:?} is a request merge policy, not a request transform",
                        entry.name, entry.kind
                    ));
                }
                other => {
                    return Err(format!(
                        "request transform {:?}: unknown type {other:?}; the known type is {:?}",
                        entry.name,
                        gcs::GCS_URI_MULTIPART
                    ));
                }
            };
            list.push(Named {
                name: entry.name,
                kind,
            });
        }
        Ok(Transforms { list })
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Every transform's check; the first failure is the record's message.
    pub fn validate(&self, input: TransformInput<'_>) -> Result<(), String> {
        self.check(input, &PayloadFields::new())
    }

    /// The body the first transform that owns the request makes of it;
    /// `None` when none owns it (the payload goes as is).
    pub fn rewrite(&self, input: TransformInput<'_>) -> Result<Option<Rewritten>, String> {
        self.rewrite_parsed(input, &PayloadFields::new())
    }

    /// [`Self::validate`], then [`Self::rewrite`], parsing the payload at
    /// most once: what the handler calls before a request is sent.
    pub fn prepare(&self, input: TransformInput<'_>) -> Result<Option<Rewritten>, String> {
        let parsed = PayloadFields::new();
        self.check(input, &parsed)?;
        self.rewrite_parsed(input, &parsed)
    }

    fn check(&self, input: TransformInput<'_>, parsed: &PayloadFields) -> Result<(), String> {
        for named in &self.list {
            let checked = match &named.kind {
                Kind::GcsUriMultipart(t) => t.validate(input, parsed),
            };
            checked.map_err(|e| {
                format!(
                    "Failed to validate request for transform: transform {}/{}: {e}",
                    named.name,
                    named.kind.type_name()
                )
            })?;
        }
        Ok(())
    }

    fn rewrite_parsed(
        &self,
        input: TransformInput<'_>,
        parsed: &PayloadFields,
    ) -> Result<Option<Rewritten>, String> {
        for named in &self.list {
            let rewritten = match &named.kind {
                Kind::GcsUriMultipart(t) => t.rewrite(input, parsed),
            };
            match rewritten {
                Ok(None) => continue,
                Ok(Some(body)) => return Ok(Some(body)),
                Err(e) => return Err(format!("Failed to transform request body: {e}")),
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
#[path = "transform_tests.rs"]
mod tests;
