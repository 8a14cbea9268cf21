//! The floors of `crates/ferry/src`, checked: every path from one top-level module into
//! another (`crate::server::…`, `use crate::{engine, …}`, `super::super::http`) must be an
//! edge that the table "Floors, checked" of docs/src/architecture.md allows, and that table
//! must have no circle. Comments and doc links are not read: they name, they do not depend.
//! And the table "Every file" of the same page names every source file there, no more.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ARCHITECTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../docs/src/architecture.md"
);

/// The table of allowed edges: module -> the modules it may name.
fn allowed() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(ARCHITECTURE).expect("docs/src/architecture.md");
    let section = text
        .split("\n## Floors, checked\n")
        .nth(1)
        .expect("architecture.md has a section \"## Floors, checked\"");
    let mut table = BTreeMap::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let [module, uses] = cells[..] else {
            panic!("a row of the floors table has two cells: {line}")
        };
        if module == "module" || module.starts_with("--") {
            continue;
        }
        let names = |cell: &str| -> BTreeSet<String> {
            cell.split(',')
                .map(|n| n.trim().trim_matches('`').to_owned())
                .filter(|n| !n.is_empty() && n != "—")
                .collect()
        };
        table.insert(module.trim_matches('`').to_owned(), names(uses));
    }
    table
}

/// The top-level modules `lib.rs` declares.
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .filter_map(|rest| rest.strip_suffix(';'))
        .map(str::to_owned)
        .collect()
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

/// The module path of a source file below `src`: `server/mod.rs` is `[server]`,
/// `server/claims.rs` is `[server, claims]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path.last().is_some_and(|l| l == "mod") {
        path.pop();
    }
    path
}

/// The code of a file without its comments (line comments, doc comments, block comments)
/// and without the contents of string literals.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut depth = 0usize;
    while let Some(c) = chars.next() {
        if depth > 0 {
            if c == '*' && chars.peek() == Some(&'/') {
                chars.next();
                depth -= 1;
            } else if c == '/' && chars.peek() == Some(&'*') {
                chars.next();
                depth += 1;
            } else if c == '\n' {
                out.push('\n');
            }
            continue;
        }
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                depth = 1;
            }
            // A raw string `r#"…"#`: skipped to its closing quote and hashes.
            'r' if !out.ends_with(|c: char| c.is_alphanumeric() || c == '_')
                && matches!(chars.peek(), Some('#' | '"')) =>
            {
                let mut hashes = 0;
                while chars.peek() == Some(&'#') {
                    chars.next();
                    hashes += 1;
                }
                match chars.next() {
                    Some('"') => {}
                    // `r#ident`: a raw identifier.
                    other => {
                        out.push('r');
                        out.extend(other);
                        continue;
                    }
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let mut seen = String::new();
                for c in chars.by_ref() {
                    seen.push(c);
                    if seen.ends_with(&close) {
                        break;
                    }
                }
                out.push_str("\"\"");
            }
            // A char literal (`'"'`, `'\''`) is skipped; a lifetime is kept.
            '\'' => {
                let mut ahead = chars.clone();
                match (ahead.next(), ahead.next()) {
                    (Some('\\'), _) => {
                        chars.next();
                        chars.next();
                        for c in chars.by_ref() {
                            if c == '\'' {
                                break;
                            }
                        }
                    }
                    (Some(_), Some('\'')) => {
                        chars.next();
                        chars.next();
                    }
                    _ => out.push(c),
                }
            }
            '"' => {
                out.push('"');
                let mut escaped = false;
                for c in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                }
                out.push('"');
            }
            _ => out.push(c),
        }
    }
    out
}

/// The top-level modules that `code`, in the module at `path`, names: through `crate::`
/// (also inside `use crate::{…}` groups) and through `super::` chains that climb to the root.
fn named_modules(code: &str, path: &[String], tops: &BTreeSet<String>) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        // `ferry_protocol::…` or `$crate::` are not this crate's root.
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level names of the group: the first segment after `{` or a comma at depth 0,
            // until the `}` that closes the group.
            let mut depth = 0;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start && depth == 0 => {
                        named.insert(ident(&group[i..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            named.insert(ident(rest));
        }
    }
    // `super::` from the module at `path` climbs one level each: climbing all of `path`
    // reaches the root, and the name after it is a top-level module.
    for (at, _) in code.match_indices("super::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut rest = &code[at..];
        let mut climbs = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            climbs += 1;
            rest = r;
        }
        if climbs == path.len() {
            named.insert(ident(rest));
        }
    }
    named.retain(|n| tops.contains(n));
    named
}

/// The rows of the table "Every file" of docs/src/architecture.md: each row's path (its
/// first cell, without backticks), in the order written.
fn every_file_rows() -> Vec<String> {
    let text = std::fs::read_to_string(ARCHITECTURE).expect("docs/src/architecture.md");
    let section = text
        .split("\n## Every file\n")
        .nth(1)
        .expect("architecture.md has a section \"## Every file\"");
    let mut rows = Vec::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let file = line
            .trim_matches('|')
            .split('|')
            .next()
            .unwrap_or("")
            .trim();
        if file == "file" || file.starts_with("--") {
            continue;
        }
        rows.push(file.trim_matches('`').to_owned());
    }
    rows
}

/// Every `.rs` file of `crates/ferry/src` has one row in the table "Every file" of
/// architecture.md, and every row names a file that exists: a file added, renamed or
/// removed without its row fails here, by name.
#[test]
fn every_file_has_a_row() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let files: BTreeSet<String> = paths
        .iter()
        .map(|file| {
            let relative = file.strip_prefix(&src).unwrap();
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            parts.join("/")
        })
        .collect();
    let rows = every_file_rows();
    let mut listed = BTreeSet::new();
    let mut problems = Vec::new();
    for row in &rows {
        if !listed.insert(row.clone()) {
            problems.push(format!("{row}: two rows"));
        }
    }
    for file in files.difference(&listed) {
        problems.push(format!("{file}: no row (add one with its job)"));
    }
    for row in listed.difference(&files) {
        problems.push(format!(
            "{row}: a row, but no such file under crates/ferry/src"
        ));
    }
    assert!(
        problems.is_empty(),
        "the table \"Every file\" of docs/src/architecture.md and crates/ferry/src differ:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_edge_between_top_level_modules_points_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let tops = top_level_modules(&src);
    let allowed = allowed();
    assert_eq!(
        allowed.keys().cloned().collect::<BTreeSet<_>>(),
        tops,
        "the floors table of architecture.md lists every top-level module of lib.rs"
    );
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    for file in &files {
        let path = module_path(&src, file);
        let Some(own) = path.first().filter(|p| tops.contains(*p)) else {
            continue; // lib.rs: the root may name every module.
        };
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        for named in named_modules(&code, &path, &tops) {
            if &named != own && !allowed[own].contains(&named) {
                upward.push(format!(
                    "{} names `{named}`, which `{own}` may not",
                    file.strip_prefix(&src).unwrap().display()
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "edges the floors table does not allow:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_floors_table_has_no_circle() {
    let allowed = allowed();
    // Depth-first from each module; a module met again on the current path is a circle.
    fn visit(
        module: &str,
        allowed: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut circle = path[at..].to_vec();
            circle.push(module.to_owned());
            return Some(circle);
        }
        path.push(module.to_owned());
        for below in allowed.get(module).into_iter().flatten() {
            if let Some(circle) = visit(below, allowed, path) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    for module in allowed.keys() {
        if let Some(circle) = visit(module, &allowed, &mut Vec::new()) {
            panic!("the floors table has a circle: {}", circle.join(" -> "));
        }
    }
}

#[test]
fn the_reader_finds_every_form_of_naming() {
    let tops: BTreeSet<String> = ["engine", "server", "client", "http"]
        .map(str::to_owned)
        .into();
    let at = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let found = |code: &str, path: &[String]| named_modules(&code_only(code), path, &tops);
    let expect = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    let server_file = at(&["server", "tools"]);
    assert_eq!(
        found("use crate::http::auth::Claims;", &server_file),
        expect(&["http"])
    );
    assert_eq!(
        found(
            "use crate::{\n    engine::{Peer, Transport},\n    client::Client as C,\n};",
            &server_file
        ),
        expect(&["client", "engine"])
    );
    assert_eq!(
        found("fn f() -> crate::client::Client { todo!() }", &server_file),
        expect(&["client"])
    );
    assert_eq!(
        found("use super::super::http::Route;", &server_file),
        expect(&["http"])
    );
    // One `super::` from server/tools.rs stays inside server.
    assert_eq!(found("use super::http::Route;", &server_file), expect(&[]));
    assert_eq!(
        found(
            "// crate::http in a comment\n/// [`X`](crate::client::X)\n/* crate::http */\nlet s = \"crate::http\";",
            &server_file
        ),
        expect(&[])
    );
    assert_eq!(
        found("ferry_protocol::jsonrpc::X; $crate::http::Y;", &server_file),
        expect(&[])
    );
    // Quotes inside raw strings and char literals do not hide the code after them.
    assert_eq!(
        found(
            "let a = r#\"{\"k\": 1}\"#; let q = '\"'; let e = '\\''; fn f<'a>(x: &'a str) {} use crate::http::X;",
            &server_file
        ),
        expect(&["http"])
    );
}
