//! A multipart/form-data body of text fields, written by hand: a random boundary no field contains, and field names escaped as the HTML standard escapes them.

use super::Rewritten;
use rand::Rng;

/// Text fields, in the order they are added.
#[derive(Debug, Default)]
pub struct FormData {
    fields: Vec<(String, String)>,
}

impl FormData {
    pub fn new() -> Self {
        FormData::default()
    }

    pub fn text(&mut self, name: &str, value: &str) {
        self.fields.push((name.to_owned(), value.to_owned()));
    }

    /// The body and its `Content-Type`.
    pub fn finish(self) -> Rewritten {
        let boundary = loop {
            let candidate = format!("llm-d-async-{:032x}", rand::rng().random::<u128>());
            // The names and values are the producer's: a boundary inside
            // one would cut the body short, so pick another.
            if !self
                .fields
                .iter()
                .any(|(n, v)| n.contains(&candidate) || v.contains(&candidate))
            {
                break candidate;
            }
        };
        let mut body = Vec::new();
        for (name, value) in &self.fields {
            body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
            body.extend_from_slice(
                format!(
                    "Content-Disposition: form-data; name=\"{}\"\r\n\r\n",
                    escape_name(name)
                )
                .as_bytes(),
            );
            body.extend_from_slice(value.as_bytes());
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        Rewritten {
            content_type: format!("multipart/form-data; boundary={boundary}"),
            body,
        }
    }
}

/// A field name inside `name="…"`: `"`, CR and LF percent-encoded, so a
/// name can never end the header or start another.
fn escape_name(name: &str) -> String {
    name.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_written_in_order_between_boundaries() {
        let mut form = FormData::new();
        form.text("url", "https://x");
        form.text("model", "m");
        let out = form.finish();
        let boundary = out
            .content_type
            .strip_prefix("multipart/form-data; boundary=")
            .unwrap();
        let body = String::from_utf8(out.body).unwrap();
        assert_eq!(
            body,
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"url\"\r\n\r\nhttps://x\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nm\r\n--{boundary}--\r\n"
            )
        );
    }

    #[test]
    fn a_hostile_field_name_cannot_break_out_of_its_header() {
        let mut form = FormData::new();
        form.text("a\"\r\nX-Evil: 1", "v");
        let body = String::from_utf8(form.finish().body).unwrap();
        assert!(body.contains("name=\"a%22%0D%0AX-Evil: 1\""), "{body}");
        assert!(!body.contains("\r\nX-Evil"));
    }
}
