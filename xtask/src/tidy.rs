//! Checks that the tree keeps its shape: the code map names every module directory and script, the README every doc, and no two product files import each other.
//!
//! Test-only (rust-analyzer keeps the same kind of check in its `tidy.rs`):
//! a newcomer should reach any behaviour in two hops from
//! docs/ARCHITECTURE.md (the directory's row, then the file's `//!` line),
//! so a directory the code map does not name is a failure here.
//!
//! The import graph is plain text, no parser: it reads the code as the
//! style guide has us write it. A file is a module (`a/b.rs` and
//! `a/b/mod.rs` are `a::b`; `lib.rs`/`main.rs` the root; a crate under
//! `src/bin/<name>/` is its own graph). An edge runs from a file to the
//! file of the longest module prefix of every path it names through
//! `crate::`, `super::` or `self::`, in a `use` or inline. Not edges: `mod`
//! declarations, re-exports (a `use` with a visibility: a facade, not a
//! dependency), comments and string literals, and test code (a file
//! declared `#[cfg(test)] mod x;`, the body of `#[cfg(test)] mod x { .. }`).

use crate::project_root;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Where product and harness code lives.
const SOURCE_DIRS: &str = "claim-core/src claim-core/conformance/src claim-memory/src \
    claim-redis/src claim-redis/lua async-worker/src xtask/src xtask/harness/src";

/// The crates whose files must not import each other: every library and
/// binary of the product (tests, the conformance suite, xtask and the
/// harness prove the product and are not held to it).
const PRODUCT_CRATES: &str = "claim-core/src claim-memory/src claim-redis/src async-worker/src \
    async-worker/src/bin/async-worker";

/// A module path (`["ops", "ack"]`); the crate root is empty.
type Module = Vec<String>;

/// The files under `dir`, sorted, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    let mut paths: Vec<PathBuf> = entries.map(|e| e.expect("an entry").path()).collect();
    paths.sort();
    paths
        .into_iter()
        .flat_map(|p| if p.is_dir() { files_under(&p) } else { vec![p] })
        .collect()
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

#[test]
fn code_map_names_every_module_directory_and_every_script() {
    let root = project_root();
    let doc = read(&root.join("docs/ARCHITECTURE.md"));
    let mut names = BTreeSet::new();
    let files = SOURCE_DIRS
        .split_whitespace()
        .flat_map(|d| files_under(&root.join(d)));
    for file in files {
        let name = file.strip_prefix(&root).expect("under the root");
        let name = name.to_string_lossy().replace('\\', "/");
        match file.extension().and_then(|e| e.to_str()) {
            Some("lua") => names.insert(name),
            Some("rs") => names.insert(format!("{}/", name.rsplit_once('/').expect("a dir").0)),
            _ => false,
        };
    }
    let missing: Vec<String> = names
        .into_iter()
        .filter(|name| !doc.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md's code map does not name these module directories and scripts; add a row with the question each answers: {missing:#?}"
    );
}

#[test]
fn readme_links_every_doc() {
    let readme = read(&project_root().join("README.md"));
    for doc in files_under(&project_root().join("docs")) {
        let name = doc.file_name().expect("a name").to_string_lossy();
        if name.ends_with(".md") {
            assert!(
                readme.contains(&format!("(docs/{name})")),
                "README.md's docs list does not link docs/{name}"
            );
        }
    }
}

#[test]
fn no_two_product_files_import_each_other() {
    let root = project_root();
    let mut found = Vec::new();
    for krate in PRODUCT_CRATES.split_whitespace() {
        for cycle in cycles(&root.join(krate)) {
            let name = |m: &Module| Some(m.join("::")).filter(|n| !n.is_empty());
            let names: Vec<String> = cycle
                .iter()
                .map(|m| name(m).unwrap_or_else(|| "crate root".into()))
                .collect();
            found.push(format!("{krate}: {}", names.join(" <-> ")));
        }
    }
    assert!(
        found.is_empty(),
        "these product files import each other; move what both need into a leaf module both import: {found:#?}"
    );
}

/// The import cycles among the crate's files rooted at `src`: each a set
/// of two or more modules that reach one another.
fn cycles(src: &Path) -> Vec<Vec<Module>> {
    let modules = modules(src);
    let names: Vec<&Module> = modules.keys().collect();
    let edges: Vec<BTreeSet<usize>> = modules
        .iter()
        .map(|(module, text)| {
            let targets = named_paths(text).into_iter().filter_map(|p| {
                let target = resolve(module, &p, &modules)?;
                names
                    .iter()
                    .position(|m| **m == target && target != *module)
            });
            targets.collect()
        })
        .collect();
    // What each module reaches through one or more edges.
    let reach: Vec<BTreeSet<usize>> = (0..names.len())
        .map(|from| {
            let (mut seen, mut todo) = (BTreeSet::new(), vec![from]);
            while let Some(v) = todo.pop() {
                todo.extend(edges[v].iter().filter(|&&u| seen.insert(u)));
            }
            seen
        })
        .collect();
    let mut placed = BTreeSet::new();
    let mut out = Vec::new();
    for v in 0..names.len() {
        let cycle: Vec<usize> = reach[v]
            .iter()
            .copied()
            .filter(|&u| reach[u].contains(&v) && placed.insert(u))
            .collect();
        if cycle.len() > 1 {
            out.push(cycle.iter().map(|&i| names[i].clone()).collect());
        }
    }
    out
}

/// Every product file of the crate rooted at `src`, by module path, with
/// its text blanked and without test code.
fn modules(src: &Path) -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    let mut test_only = Vec::new();
    for path in files_under(src) {
        let relative = path.strip_prefix(src).expect("under the crate root");
        if path.extension().is_none_or(|e| e != "rs") || relative.starts_with("bin") {
            continue;
        }
        let parts = relative.with_extension("");
        let mut module: Module = parts.iter().map(|s| s.to_string_lossy().into()).collect();
        if module.last().is_some_and(|l| l == "mod") || module == ["lib"] || module == ["main"] {
            module.pop();
        }
        let (text, children) = without_tests(&blank(&read(&path)));
        test_only.extend(
            children
                .into_iter()
                .map(|c| [module.clone(), vec![c]].concat()),
        );
        out.insert(module, text);
    }
    out.retain(|module, _| !test_only.iter().any(|t| module.starts_with(t)));
    out
}

/// The text with comments and string literals replaced by spaces.
fn blank(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let skip = if rest.starts_with("//") {
            rest.find('\n').unwrap_or(rest.len())
        } else if rest.starts_with("/*") {
            rest.find("*/").map_or(rest.len(), |end| end + 2)
        } else if c == '"' {
            let bytes = rest.as_bytes();
            let mut j = 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            (j + 1).min(rest.len())
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        };
        out.extend(std::iter::repeat_n(' ', rest[..skip].chars().count()));
        rest = &rest[skip..];
    }
    out
}

/// The text without each `#[cfg(test)]` item (a `mod x { .. }` body
/// included), and the names of the `#[cfg(test)] mod x;` files.
fn without_tests(text: &str) -> (String, Vec<String>) {
    let (mut out, mut children) = (text.to_owned(), Vec::new());
    while let Some(at) = out.find("#[cfg(test)]") {
        let after = &out[at..];
        let semi = after.find(';').unwrap_or(after.len());
        let end = match after.find('{') {
            Some(open) if open < semi => {
                let mut depth = 0;
                let close = after[open..].find(|c| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                });
                close.map_or(after.len(), |close| open + close + 1)
            }
            _ => {
                let name = after[..semi].split_whitespace().last();
                children.extend(name.map(str::to_owned));
                (semi + 1).min(after.len())
            }
        };
        out.replace_range(at..at + end, "");
    }
    (out, children)
}

/// The paths a file names through `crate::`, `super::` or `self::`, as
/// segment lists beginning with that keyword (`use` trees expanded; a
/// re-export names nothing).
fn named_paths(text: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut inline = String::with_capacity(text.len());
    for statement in text.split_inclusive(';') {
        let Some((head, tree)) = use_item(statement) else {
            inline.push_str(statement);
            continue;
        };
        // `pub use`, `pub(crate) use`: a re-export.
        if !head.trim_end().ends_with("pub") && !head.trim_end().ends_with(')') {
            paths.extend(expand(tree.trim_end_matches(';')));
        }
        inline.push_str(head);
    }
    for keyword in ["crate::", "super::", "self::"] {
        for (at, _) in inline.match_indices(keyword) {
            if inline[..at].ends_with(is_path_char) {
                continue;
            }
            let path = inline[at..].split(|c| !is_path_char(c)).next();
            let path = segments(path.unwrap_or_default());
            // `super::{..}` is a use tree's head, never an inline path.
            if path.len() >= 2 {
                paths.push(path);
            }
        }
    }
    paths
}

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == ':'
}

fn segments(path: &str) -> Vec<String> {
    let path = path.split(" as ").next().unwrap_or(path);
    let segments = path.split("::").map(str::trim).filter(|s| !s.is_empty());
    segments.map(str::to_owned).collect()
}

/// A statement that is a `use` item: what stands before the keyword (its
/// visibility, attributes, or the end of the item before) and the tree.
fn use_item(statement: &str) -> Option<(&str, &str)> {
    let at = statement
        .match_indices("use ")
        .map(|(at, _)| at)
        .find(|&at| {
            let before = statement[..at].trim_end();
            !statement[..at].ends_with(is_path_char)
                && (before.is_empty()
                    || before.ends_with(['}', ']', '{', ')'])
                    || before.ends_with("pub"))
        })?;
    let tree = statement[at + 4..].trim_start();
    tree.starts_with(|c: char| is_path_char(c) || c == '{')
        .then_some((&statement[..at], tree))
}

/// `a::{b, c::{d, e}}` as `[a, b]`, `[a, c, d]`, `[a, c, e]`.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let (mut out, mut prefixes, mut current) = (Vec::new(), vec![String::new()], String::new());
    for c in tree.chars().chain([',']) {
        let prefix = prefixes.last().map_or("", String::as_str);
        let path = format!("{prefix}::{current}");
        match c {
            '{' => prefixes.push(path),
            ',' | '}' if current.trim().is_empty() => {}
            ',' | '}' => out.push(segments(&path)),
            c => {
                current.push(c);
                continue;
            }
        }
        current.clear();
        if c == '}' {
            prefixes.pop();
        }
    }
    out
}

/// The module a path names, resolved against the file it is written in:
/// the longest prefix that is a module.
fn resolve(from: &Module, path: &[String], modules: &BTreeMap<Module, String>) -> Option<Module> {
    let mut base = if path[0] == "crate" {
        Vec::new()
    } else {
        from.clone()
    };
    let mut rest = if path[0] == "crate" { &path[1..] } else { path };
    while let Some(first) = rest.first().filter(|s| *s == "super" || *s == "self") {
        if first == "super" {
            base.pop();
        }
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    (0..=base.len())
        .rev()
        .map(|n| base[..n].to_vec())
        .find(|m| modules.contains_key(m))
}

/// A throwaway crate root in the temp directory, its files written from `(path, text)` pairs.
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
    let cycles_found = cycles(&looped);
    assert_eq!(
        cycles_found,
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
    assert_eq!(cycles(&clean), Vec::<Vec<Module>>::new());
    for dir in [looped, clean] {
        let _ = fs::remove_dir_all(dir);
    }
}
