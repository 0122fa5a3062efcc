//! docs/OPERATIONS.md cannot drift from the code: its flag tables are generated from the command line (`UPDATE_DOCS=1 cargo test -p async-worker --bin async-worker docs` rewrites them), every flag a table names exists, and its transport config table names exactly the config's fields.

use std::collections::BTreeSet;

use clap::Arg;

use crate::cli::Cli;
use crate::settings::config::{QueueConfig, TransportConfig, known_fields};

const OPERATIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/OPERATIONS.md");

/// The generated tables: (marker name, help heading of their flags, header).
const TABLES: [(&str, Option<&str>, &str); 3] = [
    (
        "flags",
        None,
        "| Flag | Variable | Meaning |\n|---|---|---|",
    ),
    (
        "go-flags",
        Some("Go processor flags"),
        "| Go flag | Here |\n|---|---|",
    ),
    (
        "deprecated-flags",
        Some("Deprecated Go flags"),
        "| Deprecated flag | Here |\n|---|---|",
    ),
];

/// One row: the flag with its value, its variable (ours only), its help.
fn row(arg: &Arg, with_variable: bool) -> String {
    let mut names: Vec<String> = arg
        .get_short()
        .map(|s| format!("-{s}"))
        .into_iter()
        .collect();
    let longs = arg
        .get_long()
        .into_iter()
        .chain(arg.get_all_aliases().into_iter().flatten());
    names.extend(longs.map(|l| format!("--{l}")));
    let value = match arg.get_value_names() {
        Some([name]) if arg.is_require_equals_set() => format!("[={name}]"),
        Some([name]) => format!(" {name}"),
        _ => String::new(),
    };
    let flags: Vec<String> = names.iter().map(|n| format!("`{n}{value}`")).collect();
    let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
    let defaults: Vec<String> = (arg.get_default_values().iter())
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    let default = match defaults.as_slice() {
        [] => String::new(),
        values => format!(" [default: {}]", values.join(", ")),
    };
    let meaning = format!("{help}{default}").replace('|', "\\|");
    let variable = (arg.get_env().and_then(|e| e.to_str()))
        .map(|e| format!("`{e}`"))
        .unwrap_or_default();
    match with_variable {
        true => format!("| {} | {variable} | {meaning} |", flags.join(", ")),
        false => format!("| {} | {meaning} |", flags.join(", ")),
    }
}

/// The table of the top-level flags under `heading` (`None`: ours).
fn table(heading: Option<&str>, header: &str) -> String {
    let mut command = Cli::full_command();
    command.build();
    let rows = (command.get_arguments())
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .filter(|a| match (a.get_help_heading(), heading) {
            (None, None) => true,
            (Some(theirs), Some(wanted)) => theirs.starts_with(wanted),
            _ => false,
        })
        .map(|a| row(a, heading.is_none()));
    std::iter::once(header.to_owned())
        .chain(rows)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `doc` with the text between `<!-- generated: NAME … -->` and the next
/// `<!-- end -->` replaced by `table`.
fn with_table(doc: &str, name: &str, table: &str) -> String {
    let open = format!("<!-- generated: {name} ");
    let start = doc
        .find(&open)
        .unwrap_or_else(|| panic!("OPERATIONS.md has no {open}-->"));
    let body = start + doc[start..].find("-->\n").expect("the marker closes") + 4;
    let end = body + doc[body..].find("<!-- end -->").expect("an end marker");
    format!("{}{table}\n{}", &doc[..body], &doc[end..])
}

#[test]
fn the_flag_tables_of_operations_md_are_generated_from_the_command_line() {
    let doc = std::fs::read_to_string(OPERATIONS).expect("docs/OPERATIONS.md");
    let mut generated = doc.clone();
    for (name, heading, header) in TABLES {
        generated = with_table(&generated, name, &table(heading, header));
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(OPERATIONS, &generated).expect("docs/OPERATIONS.md is written");
    } else if generated != doc {
        panic!(
            "docs/OPERATIONS.md's flag tables differ from the command line: rewrite them with UPDATE_DOCS=1 cargo test -p async-worker --bin async-worker docs"
        );
    }
}

#[test]
fn every_flag_a_table_of_operations_md_names_is_a_flag_of_the_command_line() {
    fn flags_of(command: &clap::Command, into: &mut BTreeSet<String>) {
        for arg in command.get_arguments() {
            let aliases = arg.get_all_aliases().into_iter().flatten();
            into.extend(
                arg.get_long()
                    .into_iter()
                    .chain(aliases)
                    .map(|l| format!("--{l}")),
            );
        }
        command
            .get_subcommands()
            .for_each(|sub| flags_of(sub, into));
    }
    let mut known = BTreeSet::new();
    let mut command = Cli::full_command();
    command.build();
    flags_of(&command, &mut known);
    let doc = std::fs::read_to_string(OPERATIONS).expect("docs/OPERATIONS.md");
    let first_cells = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| ")?.split(" | ").next());
    for cell in first_cells {
        for flag in cell
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|c| c.starts_with("--"))
        {
            let name = flag.split([' ', '=', '[', '<']).next().unwrap_or(flag);
            assert!(
                known.contains(name),
                "OPERATIONS.md names {name}, which no command takes"
            );
        }
    }
}

#[test]
fn the_transport_config_table_of_operations_md_names_every_field_and_no_other() {
    let queue = known_fields::<QueueConfig>()
        .into_iter()
        .map(|f| format!("queues[].{f}"));
    let fields: BTreeSet<String> = known_fields::<TransportConfig>()
        .into_iter()
        .chain(queue)
        .collect();
    let doc = std::fs::read_to_string(OPERATIONS).expect("docs/OPERATIONS.md");
    let section = doc
        .split("\n### Transport config\n")
        .nth(1)
        .expect("a Transport config section");
    let section = section.split("\n#").next().unwrap_or_default();
    let rows = section.lines().filter(|l| l.starts_with("| `"));
    let documented: BTreeSet<String> = rows
        .filter_map(|l| l.strip_prefix("| ")?.split(" | ").next())
        .flat_map(|cell| {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        documented, fields,
        "OPERATIONS.md, \"Transport config\": the fields differ from TransportConfig and QueueConfig"
    );
}
