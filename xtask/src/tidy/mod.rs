//! Checks that the tree keeps its shape: the code map names every module directory and script, the README every doc, and no two product files import each other.
//!
//! Test-only (rust-analyzer keeps the same kind of check in its `tidy.rs`):
//! a newcomer should reach any behaviour in two hops from
//! docs/ARCHITECTURE.md (the directory's row, then the file's `//!` line),
//! so a directory the code map does not name is a failure here, not a
//! surprise later. The import rule is [`imports`]'s.

mod imports;

use crate::project_root;
use std::fs;
use std::path::{Path, PathBuf};

/// Where product and harness code lives.
const SOURCE_DIRS: [&str; 8] = [
    "claim-core/src",
    "claim-core/conformance/src",
    "claim-memory/src",
    "claim-redis/src",
    "claim-redis/lua",
    "async-worker/src",
    "xtask/src",
    "xtask/harness/src",
];

/// Every directory under `dir` (itself included) that holds a `.rs` file,
/// and every `.lua` file.
fn module_dirs_and_scripts(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    let mut holds_rust = false;
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            module_dirs_and_scripts(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            holds_rust = true;
        } else if path.extension().is_some_and(|ext| ext == "lua") {
            out.push(path);
        }
    }
    if holds_rust {
        out.push(dir.to_path_buf());
    }
}

fn read(relative: &str) -> String {
    let path = project_root().join(relative);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

#[test]
fn code_map_names_every_module_directory_and_every_script() {
    let root = project_root();
    let doc = read("docs/ARCHITECTURE.md");
    let mut found = Vec::new();
    for dir in SOURCE_DIRS {
        module_dirs_and_scripts(&root.join(dir), &mut found);
    }
    let missing: Vec<String> = found
        .iter()
        .map(|f| {
            let name = f
                .strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            if f.is_dir() { format!("{name}/") } else { name }
        })
        .filter(|name| !doc.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md's code map does not name these module directories and scripts; add a row with the question each answers: {missing:#?}"
    );
}

/// The crates whose files must not import each other: every library and
/// binary of the product (tests, the conformance suite, xtask and the
/// harness prove the product and are not held to it).
const PRODUCT_CRATES: [&str; 5] = [
    "claim-core/src",
    "claim-memory/src",
    "claim-redis/src",
    "async-worker/src",
    "async-worker/src/bin/async-worker",
];

#[test]
fn no_two_product_files_import_each_other() {
    let root = project_root();
    let found: Vec<String> = PRODUCT_CRATES
        .iter()
        .flat_map(|krate| {
            imports::cycles(&root.join(krate))
                .into_iter()
                .map(move |cycle| {
                    let names: Vec<String> = cycle
                        .iter()
                        .map(|m| {
                            if m.is_empty() {
                                "crate root".to_owned()
                            } else {
                                m.join("::")
                            }
                        })
                        .collect();
                    format!("{krate}: {}", names.join(" <-> "))
                })
        })
        .collect();
    assert!(
        found.is_empty(),
        "these product files import each other; move what both need into a leaf module both import: {found:#?}"
    );
}

/// A throwaway crate root under the target directory, its files written from `(path, text)` pairs.
fn scratch_crate(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xtask-tidy-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    for (path, text) in files {
        let file = dir.join(path);
        fs::create_dir_all(file.parent().expect("a parent")).expect("create the scratch dirs");
        fs::write(file, text).expect("write a scratch file");
    }
    dir
}

#[test]
fn two_siblings_importing_each_other_are_a_cycle_and_a_re_export_or_a_test_module_is_not() {
    let looped = scratch_crate(
        "looped",
        &[
            ("lib.rs", "mod a;\nmod b;\n"),
            (
                "a.rs",
                "use crate::b::B;\n// crate::nothing::here\npub struct A;\n",
            ),
            ("b.rs", "pub struct B;\nfn f() -> super::a::A { todo!() }\n"),
        ],
    );
    let cycles = imports::cycles(&looped);
    assert_eq!(
        cycles,
        vec![vec![vec!["a".to_owned()], vec!["b".to_owned()]]]
    );

    // Each line below would close a cycle if it counted: the re-export and
    // the test module (a -> leaf against leaf -> a), the comment and the
    // string (a -> b against b -> a), the test file (leaf -> tests -> leaf).
    let clean = scratch_crate(
        "clean",
        &[
            ("lib.rs", "mod a;\nmod b;\n#[cfg(test)]\nmod tests;\n"),
            (
                "a/mod.rs",
                "mod leaf;\npub use self::leaf::A;\npub fn helper() {}\n#[cfg(test)]\nmod t {\n    use super::leaf::A;\n}\n// crate::b::B\nconst S: &str = \"crate::b::B\";\n",
            ),
            (
                "a/leaf.rs",
                "use super::helper;\nuse crate::tests::T;\npub struct A;\n",
            ),
            ("b.rs", "use crate::a::A;\npub struct B;\n"),
            ("tests.rs", "use crate::a::leaf::A;\npub struct T;\n"),
        ],
    );
    assert_eq!(imports::cycles(&clean), Vec::<Vec<imports::Module>>::new());
    for dir in [looped, clean] {
        let _ = fs::remove_dir_all(dir);
    }
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
