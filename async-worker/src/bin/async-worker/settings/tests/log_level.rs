//! `--zap-log-level`: the values Go's zap flag reads, the refusal of others, and where it stands between `RUST_LOG` and `LOG_LEVEL`.

use super::{assert_says, ok, refused};
use crate::logging::{level_directive, zap_log_level};

const GW: [&str; 2] = ["--igw-base-url", "http://gw"];

#[test]
fn zap_log_level_reads_gos_level_names_in_any_case_and_numbers_above_zero_as_debug_levels() {
    for (value, filter) in [
        ("debug", "debug"),
        ("DEBUG", "debug"),
        ("info", "info"),
        ("Info", "info"),
        ("warn", "warn"),
        ("error", "error"),
        ("panic", "error"),
        ("1", "debug"),
        ("2", "trace"),
        ("+5", "trace"),
        ("127", "trace"),
    ] {
        assert_eq!(
            zap_log_level(value),
            Some(filter),
            "--zap-log-level {value}"
        );
        let s = ok(&[&GW[..], &["--zap-log-level", value]].concat());
        assert_eq!(s.log_level, Some(filter), "--zap-log-level {value}");
        assert!(s.notes.is_empty(), "{:#?}", s.notes);
    }
    assert_eq!(
        ok(&GW).log_level,
        None,
        "without the flag LOG_LEVEL decides"
    );
}

#[test]
fn a_zap_log_level_go_would_refuse_stops_the_start_naming_the_flag_and_the_accepted_values() {
    for value in ["0", "-1", "verbose", "", "1.5", "99999999999999999999999"] {
        let flag = format!("--zap-log-level={value}");
        let m = refused(&[&GW[..], &[flag.as_str()]].concat());
        assert_says(
            &m,
            &[
                "--zap-log-level",
                &format!("{value:?} is not a log level"),
                "debug, info, warn, error, panic",
            ],
        );
    }
}

#[test]
fn the_zap_log_level_wins_over_log_level_which_wins_over_the_commands_default() {
    assert_eq!(
        level_directive(Some("debug"), Some("info"), "warn"),
        "debug"
    );
    assert_eq!(level_directive(Some("error"), None, "info"), "error");
    assert_eq!(level_directive(None, Some("debug"), "info"), "debug");
    assert_eq!(level_directive(None, None, "info"), "info");
}
