//! The module graph runs one way: a module of `src/` imports only modules of lower layers
//! (the table below, which the README's "How the code is laid out" section explains).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Top-level modules of `src/`, bottom layer first. A module may import any module of a lower
/// layer and none of its own layer or above.
const LAYERS: &[&[&str]] = &[
    &["redact", "json", "local_file", "flag_range", "say"],
    &["tls", "cpu", "shipped", "heap"],
    &["verdict", "atomic"],
    &["sign", "exit", "diag", "spec"],
    &["case", "error"],
    &["checks", "profile", "snapshot", "server", "service"],
    &["fuzz", "release"],
    &["runner", "settings", "report"],
    &["session"],
    &["bench"],
    &["cli"],
    &["app"],
    &["lib", "main"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a file's code (not its unit tests) names through `crate::`.
fn imports(text: &str) -> BTreeSet<String> {
    let code: String = text
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default()
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::B, c};`, possibly over several lines: the first name of each item.
            let mut depth = 0;
            let mut items = vec![String::new()];
            for c in group.chars() {
                match c {
                    '}' if depth == 0 => break,
                    ',' if depth == 0 => items.push(String::new()),
                    _ => {
                        depth += i32::from(c == '{') - i32::from(c == '}');
                        items.last_mut().expect("one item at least").push(c);
                    }
                }
            }
            for item in items {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if !name.is_empty() && name != "self" {
                    out.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

#[test]
fn no_module_imports_its_own_layer_or_one_above() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src/");
        let first = rel.components().next().expect("a path component");
        let module = Path::new(first.as_os_str())
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a UTF-8 module name")
            .to_string();
        let Some(own) = layer(&module) else {
            problems.push(format!(
                "{}: module `{module}` is in no layer",
                rel.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a readable source file");
        for imported in imports(&text) {
            if imported == module {
                continue;
            }
            match layer(&imported) {
                Some(l) if l < own => {}
                Some(_) => problems.push(format!(
                    "{}: `{module}` imports `crate::{imported}`, which is not below it",
                    rel.display()
                )),
                None => problems.push(format!(
                    "{}: `crate::{imported}` is in no layer",
                    rel.display()
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
