//! Reading output: where cargo put a test binary (its JSON messages), and each trial's result (the test binary's `test <name> ... ok` lines).

/// A test binary cargo built, from one of its JSON messages.
#[derive(Debug, PartialEq)]
pub(super) struct Artifact<'a> {
    pub(super) manifest: &'a str,
    pub(super) target: &'a str,
    pub(super) executable: &'a str,
}

/// Reads a `compiler-artifact` message with an executable (std only: the
/// fields are plain strings; the target's name is the first `"name"`).
pub(super) fn parse_artifact(line: &str) -> Option<Artifact<'_>> {
    if !line.contains(r#""reason":"compiler-artifact""#) {
        return None;
    }
    let field = |key: &str| {
        let from = line.find(&format!(r#""{key}":""#))? + key.len() + 4;
        let len = line[from..].find('"')?;
        Some(&line[from..from + len])
    };
    Some(Artifact {
        manifest: field("manifest_path")?,
        target: field("name")?,
        executable: field("executable")?,
    })
}

/// One result line of a conformance target.
#[derive(Debug, PartialEq)]
pub(super) struct Outcome<'a> {
    /// `plain`, `through_faults`, `admin`, `server_time` or `model_based`.
    pub(super) pass: &'a str,
    pub(super) passed: bool,
}

/// Parses `test <pass>::<check> ... ok` (or `FAILED`; libtest-mimic pads
/// the name with spaces); other lines, and trials outside a pass, are not
/// check results.
pub(super) fn parse_outcome(line: &str) -> Option<Outcome<'_>> {
    let (name, result) = line.strip_prefix("test ")?.split_once(" ... ")?;
    let (pass, _check) = name.trim_end().split_once("::")?;
    let passed = match result.trim() {
        "ok" => true,
        "FAILED" => false,
        _ => return None,
    };
    Some(Outcome { pass, passed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_lines_are_read_from_libtest_output() {
        assert_eq!(
            parse_outcome("test plain::acks::acking_twice_pushes_exactly_one_record    ... ok"),
            Some(Outcome {
                pass: "plain",
                passed: true
            })
        );
        let failed =
            parse_outcome("test through_faults::claims::peek_honours_offset_and_limit ... FAILED");
        assert_eq!(
            failed.map(|o| (o.pass, o.passed)),
            Some(("through_faults", false))
        );
        assert_eq!(parse_outcome("test result: ok. 106 passed; 0 failed"), None);
        assert_eq!(parse_outcome("running 106 tests"), None);
        assert_eq!(parse_outcome("test plain::x ... ignored"), None);
    }

    #[test]
    fn test_binaries_are_read_from_cargos_json_messages() {
        let line = concat!(
            r#"{"reason":"compiler-artifact","package_id":"path+file:///w/claim-memory#0.1.0","#,
            r#""manifest_path":"/w/claim-memory/Cargo.toml","target":{"kind":["test"],"#,
            r#""crate_types":["bin"],"name":"conformance","src_path":"/w/claim-memory/tests/conformance.rs"},"#,
            r#""executable":"/w/target/debug/deps/conformance-1f","fresh":true}"#
        );
        assert_eq!(
            parse_artifact(line),
            Some(Artifact {
                manifest: "/w/claim-memory/Cargo.toml",
                target: "conformance",
                executable: "/w/target/debug/deps/conformance-1f",
            })
        );
        let lib = line.replace(
            r#","executable":"/w/target/debug/deps/conformance-1f""#,
            r#","executable":null"#,
        );
        assert_eq!(parse_artifact(&lib), None);
        assert_eq!(
            parse_artifact(r#"{"reason":"build-finished","success":true}"#),
            None
        );
    }
}
