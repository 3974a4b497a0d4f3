//! Every crate in crates/ stands in floors: no top-level module imports one that imports it
//! back, directly or through others. Read from the crate's own source: every path that
//! names another top-level module (`crate::store::...`, `super::store` from a top-level
//! file, or a name the crate root re-exports from a module) is an edge, and the edges must
//! form no cycle. Test code (`#[cfg(test)]`) stands above every floor and is not read. A
//! failure lists each cycle with the file of every edge in it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// A use of module `to` by module `from`, in file `at`.
#[derive(Clone, Debug)]
struct Edge {
    from: String,
    to: String,
    at: String,
}

/// The top-level modules of one crate and the uses between them.
struct Crate {
    modules: BTreeSet<String>,
    /// Names the crate root re-exports, by the module they come from.
    reexports: BTreeMap<String, String>,
    edges: Vec<Edge>,
}

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn tokens(path: &Path) -> TokenStream {
    let text = std::fs::read_to_string(path).unwrap();
    TokenStream::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The top-level module a file under `src` belongs to, and how deep its own module sits
/// (`src/store.rs` and `src/store/mod.rs` are 1, `src/store/rows.rs` is 2); the root is 0.
fn place(src: &Path, file: &Path) -> (Option<String>, usize) {
    let rel = file.strip_prefix(src).unwrap();
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.last().unwrap();
    let stem = last.trim_end_matches(".rs");
    let depth = if stem == "mod" { parts.len() - 1 } else { parts.len() };
    if parts.len() == 1 && (stem == "lib" || stem == "main") {
        return (None, 0);
    }
    let top = parts[0].trim_end_matches(".rs").to_string();
    (Some(top), depth)
}

fn ident(tree: Option<&TokenTree>) -> Option<String> {
    match tree {
        Some(TokenTree::Ident(i)) => Some(i.to_string()),
        _ => None,
    }
}

/// Whether `trees[at]` and `trees[at + 1]` are the two colons of `::`.
fn path_sep(trees: &[TokenTree], at: usize) -> bool {
    matches!((trees.get(at), trees.get(at + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':')
}

/// The first name of each item of a use group (`{a, b::c, self}` gives a, b, self).
fn group_heads(group: &TokenStream) -> Vec<String> {
    let trees: Vec<TokenTree> = group.clone().into_iter().collect();
    let mut heads = Vec::new();
    let mut start = true;
    for tree in &trees {
        match tree {
            TokenTree::Punct(p) if p.as_char() == ',' => start = true,
            TokenTree::Ident(i) if start => {
                heads.push(i.to_string());
                start = false;
            }
            _ => start = false,
        }
    }
    heads
}

/// The module names a path reaches at the crate's top level, walking `trees` of a module
/// `depth` levels below the root; `mod name { ... }` blocks go one level deeper.
fn walk(trees: &[TokenTree], depth: usize, found: &mut Vec<String>) {
    let mut i = 0;
    while i < trees.len() {
        let tree = &trees[i];
        if test_only(trees, i) {
            i = item_end(trees, i + 2);
            continue;
        }
        if let TokenTree::Group(g) = tree {
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            let inline_mod =
                g.delimiter() == Delimiter::Brace && i >= 2 && ident(trees.get(i - 2)).as_deref() == Some("mod");
            walk(&inner, if inline_mod { depth + 1 } else { depth }, found);
            i += 1;
            continue;
        }
        // The number of levels this path climbs before naming a module, if it starts here.
        let mut at = i;
        let mut level = match ident(Some(tree)).as_deref() {
            Some("crate") if path_sep(trees, i + 1) => {
                at = i + 3;
                Some(0)
            }
            Some("super") if path_sep(trees, i + 1) => {
                let mut up = 1;
                at = i + 3;
                while ident(trees.get(at)).as_deref() == Some("super") && path_sep(trees, at + 1) {
                    up += 1;
                    at += 3;
                }
                depth.checked_sub(up)
            }
            _ => None,
        };
        // `crate` as the last segment of a `super::` chain is not a path start: skip.
        if i >= 2 && path_sep(trees, i - 2) {
            level = None;
        }
        if level == Some(0) {
            match trees.get(at) {
                Some(TokenTree::Ident(name)) => found.push(name.to_string()),
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                    found.extend(group_heads(&g.stream()))
                }
                _ => {}
            }
            i = at;
            continue;
        }
        i += 1;
    }
}

/// Whether `trees[at..]` starts with `#[cfg(test)]`: test code stands above every floor,
/// so what it imports is no edge.
fn test_only(trees: &[TokenTree], at: usize) -> bool {
    matches!((trees.get(at), trees.get(at + 1)),
        (Some(TokenTree::Punct(p)), Some(TokenTree::Group(g)))
            if p.as_char() == '#' && g.delimiter() == Delimiter::Bracket
                && g.stream().to_string().replace(' ', "") == "cfg(test)")
}

/// Where the item starting at `trees[at]` ends: after its body or its `;`.
fn item_end(trees: &[TokenTree], mut at: usize) -> usize {
    while let Some(tree) = trees.get(at) {
        at += 1;
        match tree {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => break,
            TokenTree::Punct(p) if p.as_char() == ';' => break,
            _ => {}
        }
    }
    at
}

fn read_crate(dir: &Path) -> Option<Crate> {
    let src = dir.join("src");
    let root = ["lib.rs", "main.rs"].iter().map(|f| src.join(f)).find(|p| p.exists())?;
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> =
        files.iter().filter_map(|f| place(&src, f).0).filter(|m| !["bin"].contains(&m.as_str())).collect();

    // `pub use store::{Store, Row};` at the root: `crate::Store` is a use of `store`.
    let mut reexports = BTreeMap::new();
    let root_trees: Vec<TokenTree> = tokens(&root).into_iter().collect();
    for (k, tree) in root_trees.iter().enumerate() {
        if ident(Some(tree)).as_deref() != Some("use") {
            continue;
        }
        let Some(head) = ident(root_trees.get(k + 1)) else { continue };
        if !modules.contains(&head) {
            continue;
        }
        let mut names = Vec::new();
        let mut j = k + 2;
        while j < root_trees.len() {
            match &root_trees[j] {
                TokenTree::Punct(p) if p.as_char() == ';' => break,
                TokenTree::Ident(i) => names.push(i.to_string()),
                TokenTree::Group(g) => names.extend(flat_idents(&g.stream())),
                _ => {}
            }
            j += 1;
        }
        for name in names {
            if !matches!(name.as_str(), "self" | "as") {
                reexports.entry(name).or_insert_with(|| head.clone());
            }
        }
    }

    let mut edges = Vec::new();
    for file in &files {
        let (Some(from), depth) = place(&src, file) else { continue };
        let trees: Vec<TokenTree> = tokens(file).into_iter().collect();
        let mut found = Vec::new();
        walk(&trees, depth, &mut found);
        for name in found {
            let to = if modules.contains(&name) { Some(name) } else { reexports.get(&name).cloned() };
            if let Some(to) = to.filter(|to| *to != from) {
                let at = file.strip_prefix(&src).unwrap_or(file).display().to_string();
                if !edges.iter().any(|e: &Edge| e.to == to && e.at == at) {
                    edges.push(Edge { from: from.clone(), to, at });
                }
            }
        }
    }
    Some(Crate { modules, reexports, edges })
}

fn flat_idents(stream: &TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    for tree in stream.clone() {
        match tree {
            TokenTree::Ident(i) => out.push(i.to_string()),
            TokenTree::Group(g) => out.extend(flat_idents(&g.stream())),
            _ => {}
        }
    }
    out
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(modules: &BTreeSet<String>, edges: &[Edge]) -> Vec<BTreeSet<String>> {
    let names: Vec<&String> = modules.iter().collect();
    let index_of = |m: &str| names.iter().position(|n| n.as_str() == m);
    let mut next: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); names.len()];
    for e in edges {
        if let (Some(a), Some(b)) = (index_of(&e.from), index_of(&e.to)) {
            next[a].insert(b);
        }
    }
    struct State {
        counter: usize,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, next: &[BTreeSet<usize>], s: &mut State) {
        s.index[v] = Some(s.counter);
        s.low[v] = s.counter;
        s.counter += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &next[v] {
            match s.index[w] {
                None => {
                    visit(w, next, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let n = names.len();
    let mut s = State {
        counter: 0,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(v, &next, &mut s);
        }
    }
    s.out.into_iter().filter(|c| c.len() > 1).map(|c| c.into_iter().map(|i| names[i].clone()).collect()).collect()
}

fn crate_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(crates_dir()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let mut report = String::new();
    for dir in crate_dirs() {
        let Some(krate) = read_crate(&dir) else { continue };
        for component in cycles(&krate.modules, &krate.edges) {
            report += &format!(
                "\n{}: {} import each other:\n",
                dir.file_name().unwrap().to_string_lossy(),
                component.iter().cloned().collect::<Vec<_>>().join(", ")
            );
            for e in krate.edges.iter().filter(|e| component.contains(&e.from) && component.contains(&e.to)) {
                report += &format!("  {} -> {}  ({})\n", e.from, e.to, e.at);
            }
        }
    }
    assert!(report.is_empty(), "import cycles between top-level modules:{report}");
}

/// The reader above must see the uses it claims to: a path through `crate::`, a group, a
/// `super::` from a top-level file, and a root re-export are each an edge; `super::` inside
/// a module's own subtree is not.
#[test]
fn the_reader_finds_each_form_of_use() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/restgen");
    let krate = read_crate(&root).unwrap();
    assert!(krate.modules.contains("store") && krate.modules.contains("problem"));
    assert_eq!(krate.reexports.get("Problem").map(String::as_str), Some("problem"));

    let mut found = Vec::new();
    let sample = "use crate::{alpha, beta::x};\nfn f() { crate::gamma::g(); super::delta::d(); }\n\
                  mod inner { use super::*; fn t() { super::super::epsilon::e(); } }\n\
                  #[cfg(test)] mod tests { use crate::zeta; }";
    let trees: Vec<TokenTree> = TokenStream::from_str(sample).unwrap().into_iter().collect();
    walk(&trees, 1, &mut found);
    let names: Vec<&str> = found.iter().map(String::as_str).collect();
    assert_eq!(names, ["alpha", "beta", "gamma", "delta", "epsilon"]);

    let mut deeper = Vec::new();
    walk(&trees, 2, &mut deeper);
    let names: Vec<&str> = deeper.iter().map(String::as_str).collect();
    assert_eq!(names, ["alpha", "beta", "gamma"], "super:: below a top-level module stays inside it");
}

/// The runtime's floors as docs/architecture.md draws them: module name to floor number.
fn documented_floors() -> BTreeMap<String, u32> {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md")).unwrap();
    let section = doc.split("## The runtime's floors").nth(1).expect("docs/architecture.md draws the floors");
    let mut floors = BTreeMap::new();
    for line in section.lines().take_while(|l| !l.starts_with("## ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(floor) = cells.get(1).and_then(|c| c.parse::<u32>().ok()) else { continue };
        for module in cells[2].split(',') {
            let name = module.trim().trim_matches('`').to_string();
            assert!(floors.insert(name.clone(), floor).is_none(), "`{name}` is on two floors");
        }
    }
    floors
}

/// docs/architecture.md names every runtime module on one floor, and no module imports one
/// on a floor above its own: the drawing a newcomer reads is the code.
#[test]
fn the_runtime_stands_on_the_floors_the_docs_draw() {
    let krate = read_crate(&crates_dir().join("restgen")).unwrap();
    let floors = documented_floors();
    let drawn: BTreeSet<String> = floors.keys().cloned().collect();
    let missing: Vec<_> = krate.modules.difference(&drawn).collect();
    let gone: Vec<_> = drawn.difference(&krate.modules).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "the floors in docs/architecture.md lack {missing:?} and name {gone:?}"
    );
    let upward: Vec<String> = krate
        .edges
        .iter()
        .filter(|e| floors[&e.to] > floors[&e.from])
        .map(|e| {
            format!("{} (floor {}) imports {} (floor {}) in {}", e.from, floors[&e.from], e.to, floors[&e.to], e.at)
        })
        .collect();
    assert!(upward.is_empty(), "imports up a floor:\n{}", upward.join("\n"));
}
