//! What a bench run prints after its table and writes to disk: payload keys left, the 16 KiB ratios, the protected/unprotected ratio, the JSON figures.

use super::Options;
use super::table::{Row, base_name, get};
use crate::{Error, project_root};
use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// The payload keys each drain by reference left (each ack deletes its own: 0).
pub(super) fn print_payload_keys_left(rows: &[Row]) {
    let left: Vec<&str> = rows
        .iter()
        .map(|r| get(r, "payload_keys_left"))
        .filter(|n| *n != "-")
        .collect();
    if !left.is_empty() {
        println!(
            "payload keys left after each drain by reference: {}",
            left.join(", ")
        );
    }
}

/// The 16 KiB rows beside each other and the plain protected row.
pub(super) fn print_payload_ratios(rows: &[Row]) {
    let find = |name: &str| rows.iter().find(|r| base_name(r) == name);
    let figure = |row: Option<&Row>, key: &str| -> Option<f64> { get(row?, key).parse().ok() };
    let (plain, inline, by_ref) = (
        find("protected"),
        find("protected-16K"),
        find("protected-16K-ref"),
    );
    for (key, what) in [
        ("jobs_per_s", "jobs/s"),
        ("redis_cpu_us_per_job", "Redis µs/job"),
    ] {
        if let (Some(i), Some(r)) = (figure(inline, key), figure(by_ref, key)) {
            let against = figure(plain, key)
                .map(|p| {
                    format!(
                        "; over plain protected: inline {:.2}, by reference {:.2}",
                        i / p,
                        r / p
                    )
                })
                .unwrap_or_default();
            println!("16 KiB {what}: by reference / inline {:.2}{against}", r / i);
        }
    }
}

pub(super) fn ratio(rows: &[Row]) -> Option<f64> {
    let rate = |name: &str| -> Option<f64> {
        let row = rows.iter().find(|r| base_name(r) == name)?;
        get(row, "jobs_per_s").parse().ok()
    };
    Some(rate("protected")? / rate("unprotected")?)
}

pub(super) fn write_json(
    dir: &Path,
    options: &Options,
    program: &Path,
    runs: &[String],
    ratio: Option<f64>,
) -> Result<(), Error> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let commit = Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .current_dir(project_root())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let args: Vec<String> = options.pass.iter().map(|a| format!("{a:?}")).collect();
    let text = format!(
        "{{\"unix_time\":{secs},\"commit\":\"{commit}\",\"program\":{:?},\"args\":[{}],\
         \"protected_over_unprotected\":{},\"runs\":[\n{}\n]}}\n",
        program.display().to_string(),
        args.join(","),
        ratio.map_or("null".to_owned(), |r| format!("{r:.4}")),
        runs.join(",\n")
    );
    for name in ["latest.json".to_owned(), format!("bench-{secs}.json")] {
        let path = dir.join(&name);
        std::fs::write(&path, &text)
            .map_err(|e| Error::Failed(format!("cannot write {}: {e}", path.display())))?;
    }
    println!("\nfigures: target/bench/latest.json, target/bench/bench-{secs}.json");
    Ok(())
}
