//! Checks that the docs keep up with the tree: the code map names every module and script, the README every doc.
//!
//! Test-only (rust-analyzer keeps the same kind of check in its `tidy.rs`):
//! a newcomer should reach any behaviour in one hop from
//! docs/ARCHITECTURE.md, so a file the code map does not name is a failure
//! here, not a surprise later.

use crate::project_root;
use std::fs;
use std::path::{Path, PathBuf};

/// Where product and harness code lives.
const SOURCE_DIRS: [&str; 7] = [
    "claim-core/src",
    "claim-memory/src",
    "claim-redis/src",
    "claim-redis/lua",
    "async-worker/src",
    "xtask/src",
    "xtask/harness/src",
];

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files_under(&path, out);
        } else if path
            .extension()
            .is_some_and(|ext| ext == "rs" || ext == "lua")
        {
            out.push(path);
        }
    }
}

fn read(relative: &str) -> String {
    let path = project_root().join(relative);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

#[test]
fn code_map_names_every_module_and_script() {
    let root = project_root();
    let doc = read("docs/ARCHITECTURE.md");
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        files_under(&root.join(dir), &mut files);
    }
    let missing: Vec<String> = files
        .iter()
        .map(|f| {
            f.strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/")
        })
        .filter(|f| !doc.contains(&format!("`{f}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md's code map does not name these files; add a row with the question each answers: {missing:#?}"
    );
}

#[test]
fn readme_links_every_doc() {
    let readme = read("README.md");
    let docs = fs::read_dir(project_root().join("docs")).expect("docs/ exists");
    for entry in docs {
        let name = entry.expect("a docs entry").file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".md") {
            assert!(
                readme.contains(&format!("(docs/{name})")),
                "README.md's docs list does not link docs/{name}"
            );
        }
    }
}
