//! The library's folders are floors, bottom to top as the data flows
//! (CONTRIBUTING.md has the map): each may import only the floors below
//! it, so that storage never knows analysis and no two folders depend on
//! each other. This reads every file of `src/` and fails on an import that
//! goes up or sideways.

use std::path::{Path, PathBuf};

/// The floors, bottom first.
const FLOORS: [&str; 12] = [
    "chess", "hash", "score", "io", "nnue", "syzygy", "search", "record", "analysis", "label",
    "pipeline", "job",
];

/// Source text without comments (line comments and doc comments; the code
/// has no block comments), string literals emptied.
fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut prev = ' ';
        let mut kept = String::new();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if in_string {
                if c == '"' && prev != '\\' {
                    in_string = false;
                    kept.push('"');
                }
                prev = if prev == '\\' && c == '\\' { ' ' } else { c };
                i += 1;
                continue;
            }
            if c == '/' && chars.get(i + 1) == Some(&'/') {
                break;
            }
            if c == '"' {
                in_string = true;
            }
            kept.push(c);
            prev = c;
            i += 1;
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// The first path segment of each item of a `use crate::...;` body.
fn use_roots(body: &str) -> Vec<String> {
    let body = body.trim();
    let Some(inner) = body.strip_prefix('{').and_then(|b| b.strip_suffix('}')) else {
        return vec![body.split("::").next().unwrap_or("").trim().to_string()];
    };
    let mut roots = Vec::new();
    let (mut depth, mut item) = (0, String::new());
    for c in inner.chars().chain([',']) {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                let root: String =
                    item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !root.is_empty() {
                    roots.push(root);
                }
                item.clear();
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    roots
}

/// The folders (or root files) a source file imports from.
fn imports(text: &str) -> Vec<String> {
    let code = code(text);
    let mut found = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("use crate::") {
        let after = &rest[at + "use crate::".len()..];
        let end = after.find(';').unwrap_or(after.len());
        found.extend(use_roots(&after[..end]));
        rest = &after[end..];
    }
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let name: String =
            after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        // A module on the way (`crate::io::same_file`), or an item the
        // crate root re-exports (`crate::Color`, `crate::STARTPOS`): the
        // second is a path that runs back up through the root.
        let item = name.chars().next().is_some_and(|c| c.is_ascii_uppercase());
        if !name.is_empty() && (item || after[name.len()..].starts_with("::")) {
            found.push(name);
        }
        rest = after;
    }
    found.sort();
    found.dedup();
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn each_floor_imports_only_the_floors_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let floor = |name: &str| FLOORS.iter().position(|f| *f == name);
    let mut seen = 0;
    let mut wrong = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy();
        let top = top.trim_end_matches(".rs");
        // The crate root re-exports every floor; the binary uses the
        // crate's public interface only.
        let Some(own) = floor(top) else { continue };
        seen += 1;
        for import in imports(&std::fs::read_to_string(path).unwrap()) {
            match floor(&import) {
                Some(f) if f < own || import == top => {}
                Some(_) => wrong.push(format!("{}: imports {import}", rel.display())),
                // Items the crate root re-exports are reached by their
                // floor's path inside the crate.
                None => wrong.push(format!("{}: imports crate::{import}", rel.display())),
            }
        }
    }
    assert!(seen > 60, "only {seen} files of src/ read");
    assert!(wrong.is_empty(), "imports that go up or sideways:\n{}", wrong.join("\n"));
}

/// The checker itself finds what it must: an upward import in a `use`
/// tree and in a path, but not in a comment or a string.
#[test]
fn the_import_reader_reads_use_trees_and_paths() {
    let text = "use crate::{\n    chess::{mv::Move, types::Color},\n    record::format::Label,\n};\n\
                // use crate::job::x;\nfn f() { crate::analysis::judge(); let s = \"crate::cli::x\"; }\n";
    assert_eq!(imports(text), ["analysis", "chess", "record"]);
    // Items named through the crate root, inline or in a use tree.
    let text =
        "fn f() { if c == crate::Color::White { crate::STARTPOS } }\nuse crate::{Square, io::x};\n";
    assert_eq!(imports(text), ["Color", "STARTPOS", "Square", "io"]);
}
