//! The file-level import graph of one crate's product code, and its cycles: what `tidy` checks so no two files import each other.
//!
//! A file is a module: `a/b.rs` and `a/b/mod.rs` are `a::b`, the crate
//! root is `lib.rs` or `main.rs`. An edge runs from a file to the file of
//! the longest module prefix of every path it names through `crate::`,
//! `super::` or `self::`, in a `use` or inline. Not edges: `mod`
//! declarations and re-exports (a `use` with a visibility: a
//! facade, not a dependency). Test code is not product code: a file declared as
//! `#[cfg(test)] mod x;` and the body of a `#[cfg(test)] mod x { .. }` are
//! left out. Comments and string literals are blanked first, so a path in
//! prose is not an edge. A crate under `src/bin/<name>/` is its own graph.
//! Plain text, no parser: it reads the code as the style guide has us
//! write it (one item per `use` tree, paths spelled out).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// A module path (`["ops", "ack"]`); the crate root is empty.
pub(super) type Module = Vec<String>;

/// Every product file of the crate rooted at `src` (the directory holding
/// `lib.rs` or `main.rs`), by module path, with its blanked text.
fn files(src: &Path) -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    let test_only: BTreeSet<Module> = out
        .iter()
        .flat_map(|(module, text)| test_children(module, text))
        .collect();
    out.retain(|module, _| !test_only.iter().any(|t| module.starts_with(t)));
    out
}

fn walk(src: &Path, dir: &Path, out: &mut BTreeMap<Module, String>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let relative = path.strip_prefix(src).expect("under the crate root");
        if path.is_dir() {
            // Binaries under src/bin/ are crates of their own.
            if relative != Path::new("bin") {
                walk(src, &path, out);
            }
            continue;
        }
        if path.extension().is_none_or(|ext| ext != "rs") || relative.starts_with("bin") {
            continue;
        }
        let mut module: Module = relative
            .with_extension("")
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        if module.last().is_some_and(|last| last == "mod")
            || module == ["lib"]
            || module == ["main"]
        {
            module.pop();
        }
        let text =
            fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        out.insert(module, without_test_modules(&blank(&text)));
    }
}

/// The text with comments and string and char literals replaced by spaces.
fn blank(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        let skip = if rest.starts_with("//") {
            rest.find('\n').unwrap_or(rest.len())
        } else if rest.starts_with("/*") {
            rest.find("*/").map_or(rest.len(), |end| end + 2)
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() && rest.as_bytes()[j] != b'"' {
                j += if rest.as_bytes()[j] == b'\\' { 2 } else { 1 };
            }
            (j + 1).min(rest.len())
        } else {
            0
        };
        if skip > 0 {
            out.extend(std::iter::repeat_n(' ', rest[..skip].chars().count()));
            i += skip;
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The text without the bodies of `#[cfg(test)] mod x { .. }`.
fn without_test_modules(text: &str) -> String {
    let mut out = text.to_owned();
    while let Some(at) = out.find("#[cfg(test)]") {
        let after = &out[at..];
        let open = after.find('{');
        let semi = after.find(';');
        let end = match (open, semi) {
            (Some(open), semi) if semi.is_none_or(|s| open < s) => {
                let mut depth = 0;
                let mut end = after.len();
                for (j, c) in after[open..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = open + j + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (_, Some(semi)) => semi + 1,
            _ => after.len(),
        };
        // Keep a `#[cfg(test)] mod x;` visible to `test_children`.
        let kept = if after[..end].contains('{') {
            String::new()
        } else {
            after[..end].replace("#[cfg(test)]", "#[cfg(test_only)]")
        };
        out.replace_range(at..at + end, &kept);
    }
    out
}

/// The children `module` declares as `#[cfg(test)] mod x;`.
fn test_children(module: &Module, text: &str) -> Vec<Module> {
    text.match_indices("#[cfg(test_only)]")
        .filter_map(|(at, _)| {
            let decl = text[at..].split(';').next()?;
            let name = decl.split_whitespace().last()?;
            let mut child = module.clone();
            child.push(name.to_owned());
            Some(child)
        })
        .collect()
}

/// The paths a file names through `crate::`, `super::` or `self::`, as
/// segment lists beginning with that keyword (`use` trees expanded; a
/// re-export names nothing).
fn named_paths(text: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut inline = String::with_capacity(text.len());
    for statement in text.split_inclusive(';') {
        match use_tree(statement) {
            Some((head, tree)) => {
                if !is_re_export(head) {
                    expand(&[], tree.trim_end_matches(';'), &mut paths);
                }
                inline.push_str(head);
            }
            None => inline.push_str(statement),
        }
    }
    for keyword in ["crate::", "super::", "self::"] {
        for (at, _) in inline.match_indices(keyword) {
            if inline[..at].chars().next_back().is_some_and(is_path_char) {
                continue;
            }
            let path: Vec<String> = inline[at..]
                .split(|c: char| !is_path_char(c))
                .next()
                .unwrap_or_default()
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            // `super::{..}` is a use tree's head, never an inline path.
            if path.len() >= 2 {
                paths.push(path);
            }
        }
    }
    paths
}

/// A `use` with a visibility (`pub`, `pub(crate)`, `pub(super)`) re-exports:
/// it is a module's facade, not what the module itself depends on.
fn is_re_export(head: &str) -> bool {
    let head = head.trim_end();
    head.ends_with("pub")
        || (head.ends_with(')')
            && head
                .rsplit("pub")
                .next()
                .is_some_and(|v| v.trim_start().starts_with('(')))
}

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == ':'
}

/// A statement that is a `use` item: what stands before the keyword (its
/// visibility, attributes, or the end of the item before) and the tree.
fn use_tree(statement: &str) -> Option<(&str, &str)> {
    let at = statement
        .match_indices("use ")
        .map(|(at, _)| at)
        .find(|&at| {
            let before = statement[..at].trim_end();
            !statement[..at]
                .chars()
                .next_back()
                .is_some_and(is_path_char)
                && (before.is_empty()
                    || before.ends_with(['}', ']', '{', ')'])
                    || before.ends_with("pub"))
        })?;
    let tree = statement[at + 4..].trim_start();
    tree.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '{' || c == ':')
        .then_some((&statement[..at], tree))
}

/// `a::{b, c::{d, e}}` as `[a, b]`, `[a, c, d]`, `[a, c, e]`.
fn expand(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = &tree[..open];
        let body = tree[open + 1..]
            .trim_end()
            .strip_suffix('}')
            .unwrap_or(&tree[open + 1..]);
        let base = extended(prefix, head);
        let (mut depth, mut start) = (0, 0);
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&base, &body[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&base, &body[start..], out);
        return;
    }
    let name = tree.split(" as ").next().unwrap_or(tree);
    let path = extended(prefix, name);
    if !path.is_empty() {
        out.push(path);
    }
}

/// `prefix` followed by the segments of the path `text` (`a::b` → `a`, `b`).
fn extended(prefix: &[String], text: &str) -> Vec<String> {
    let mut path = prefix.to_vec();
    path.extend(
        text.split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
    );
    path
}

/// The module a path names, resolved against the file it is written in.
fn target(from: &Module, path: &[String], modules: &BTreeMap<Module, String>) -> Option<Module> {
    let (mut base, rest) = match path[0].as_str() {
        "crate" => (Vec::new(), &path[1..]),
        _ => (from.clone(), path),
    };
    let mut rest = rest;
    while let Some(first) = rest.first() {
        match first.as_str() {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    (0..=base.len())
        .rev()
        .map(|n| base[..n].to_vec())
        .find(|m| modules.contains_key(m))
}

/// The import cycles among the crate's files: each a set of two or more
/// modules that reach one another (Tarjan's strongly connected components).
pub(super) fn cycles(src: &Path) -> Vec<Vec<Module>> {
    let modules = files(src);
    let index: BTreeMap<&Module, usize> = modules.keys().enumerate().map(|(i, m)| (m, i)).collect();
    let names: Vec<&Module> = modules.keys().collect();
    let edges: Vec<BTreeSet<usize>> = modules
        .iter()
        .map(|(module, text)| {
            named_paths(text)
                .iter()
                .filter_map(|p| target(module, p, &modules))
                .filter(|t| t != module)
                .map(|t| index[&t])
                .collect()
        })
        .collect();
    strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.into_iter().map(|i| names[i].clone()).collect())
        .collect()
}

fn strongly_connected(edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct Walk<'a> {
        edges: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(w: &mut Walk<'_>, v: usize) {
        w.index[v] = Some(w.next);
        w.low[v] = w.next;
        w.next += 1;
        w.stack.push(v);
        w.on_stack[v] = true;
        for &u in w.edges[v].iter() {
            match w.index[u] {
                None => {
                    visit(w, u);
                    w.low[v] = w.low[v].min(w.low[u]);
                }
                Some(i) if w.on_stack[u] => w.low[v] = w.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(w.low[v]) == w.index[v] {
            let mut component = Vec::new();
            while let Some(u) = w.stack.pop() {
                w.on_stack[u] = false;
                component.push(u);
                if u == v {
                    break;
                }
            }
            component.sort_unstable();
            w.out.push(component);
        }
    }
    let n = edges.len();
    let mut w = Walk {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if w.index[v].is_none() {
            visit(&mut w, v);
        }
    }
    w.out
}
