//! Checks that the tree keeps its shape: the code map names every module directory and script, the README every doc, and no two product files import each other.
//!
//! Test-only (rust-analyzer keeps the same kind of check in its `tidy.rs`):
//! a newcomer should reach any behaviour in two hops from
//! docs/ARCHITECTURE.md (the directory's row, then the file's `//!` line),
//! so a directory the code map does not name is a failure here.
//!
//! The import graph is read with syn. A file is a module (`a/b.rs` and
//! `a/b/mod.rs` are `a::b`; `lib.rs`/`main.rs` the root; a crate under
//! `src/bin/<name>/` is its own graph). An edge runs from a file to the
//! file of the longest module prefix of every path it names through
//! `crate::`, `super::` or `self::`, in a `use` or inline. Not edges: `mod`
//! declarations, re-exports (a `use` with a visibility: a facade, not a
//! dependency), macro bodies, and test code (a file declared
//! `#[cfg(test)] mod x;`, any `#[cfg(test)]` item).

use crate::project_root;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use syn::visit::Visit;

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
        .map(|(module, paths)| {
            let targets = paths.iter().filter_map(|p| {
                let target = resolve(module, p, &modules)?;
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
/// the paths it names (test code left out).
fn modules(src: &Path) -> BTreeMap<Module, Vec<Vec<String>>> {
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
        let file = syn::parse_file(&read(&path))
            .unwrap_or_else(|e| panic!("parse {}: {e}", path.display()));
        let mut named = Named::default();
        named.visit_file(&file);
        let children = named.test_files.into_iter();
        test_only.extend(children.map(|c| [module.clone(), vec![c]].concat()));
        out.insert(module, named.paths);
    }
    out.retain(|module, _| !test_only.iter().any(|t| module.starts_with(t)));
    out
}

/// The paths a file names through `crate::`, `super::` or `self::`, as
/// segment lists beginning with that keyword, and its `#[cfg(test)] mod x;`.
#[derive(Default)]
struct Named {
    paths: Vec<Vec<String>>,
    test_files: Vec<String>,
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

impl Named {
    fn push(&mut self, path: Vec<String>) {
        let keyword = path.first().map(String::as_str);
        if matches!(keyword, Some("crate" | "super" | "self")) && path.len() >= 2 {
            self.paths.push(path);
        }
    }

    /// `a::{b, c::{d, e}}` as `[a, b]`, `[a, c, d]`, `[a, c, e]`.
    fn use_tree(&mut self, prefix: &[String], tree: &syn::UseTree) {
        let with = |name: &syn::Ident| [prefix, &[name.to_string()]].concat();
        match tree {
            syn::UseTree::Path(p) => self.use_tree(&with(&p.ident), &p.tree),
            syn::UseTree::Name(n) => self.push(with(&n.ident)),
            syn::UseTree::Rename(r) => self.push(with(&r.ident)),
            syn::UseTree::Glob(_) => self.push(prefix.to_vec()),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(prefix, t)),
        }
    }
}

impl<'ast> Visit<'ast> for Named {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Trait(t) => &t.attrs,
            syn::Item::Type(t) => &t.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        match item {
            syn::Item::Mod(m) if is_test(attrs) && m.content.is_none() => {
                self.test_files.push(m.ident.to_string());
            }
            _ if is_test(attrs) => {}
            // `pub use`, `pub(crate) use`: a re-export names nothing.
            syn::Item::Use(u) if !matches!(u.vis, syn::Visibility::Inherited) => {}
            syn::Item::Use(u) => self.use_tree(&[], &u.tree),
            _ => syn::visit::visit_item(self, item),
        }
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !is_test(&item.attrs) {
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let path_segments = path.segments.iter().map(|s| s.ident.to_string());
        self.push(path_segments.collect());
        syn::visit::visit_path(self, path);
    }
}

/// The module a path names, resolved against the file it is written in:
/// the longest prefix that is a module.
fn resolve<V>(from: &Module, path: &[String], modules: &BTreeMap<Module, V>) -> Option<Module> {
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

#[test]
fn every_path_the_architecture_doc_names_exists() {
    let root = project_root();
    let doc = read(&root.join("docs/ARCHITECTURE.md"));
    let tops = [
        "claim-core/",
        "claim-memory/",
        "claim-redis/",
        "async-worker/",
        "xtask/",
    ];
    let missing: Vec<&str> = doc
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|name| {
            tops.iter().any(|top| name.starts_with(top)) && !name.contains(['*', '<', ' '])
        })
        .filter(|name| !root.join(name).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md names paths that do not exist: {missing:#?}"
    );
}
