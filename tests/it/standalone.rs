//! The repository stands alone: no source, test or script of the project reads outside the checkout.
//!
//! A user's clone has nothing beside it, so a path that climbs above the workspace root (a crate reaching
//! for a `shared` folder next to the checkout) or names the folder the checkout happens to sit in works only
//! on the machine it was written on.
//! Documentation (Markdown, `docs/`, licence texts) may name such paths; everything else may not.

use std::path::{Component, Path, PathBuf};

use crate::support::workspace_root;

/// One path-like reference found in a file.
#[derive(Debug, PartialEq)]
struct Escape {
    line: usize,
    text: String,
}

#[test]
fn no_source_test_or_script_names_a_path_outside_the_repository() {
    let root = workspace_root();
    let outside = outside_prefixes(&root);
    let mut findings = Vec::new();
    let files = project_files(&root);
    assert!(
        files.iter().any(|f| f.ends_with("tests/it/support.rs")),
        "the file list misses tests/it/support.rs: {} files",
        files.len()
    );
    for rel in files.iter().filter(|rel| !is_documentation(rel)) {
        let Ok(text) = std::fs::read_to_string(root.join(rel)) else {
            continue; // binary data (fixtures), or removed since it was listed
        };
        for escape in relative_escapes(&root, rel, &text) {
            findings.push(format!(
                "{}:{}: {}",
                rel.display(),
                escape.line,
                escape.text
            ));
        }
        for (line_no, line) in text.lines().enumerate() {
            for prefix in outside.iter().filter(|p| names_prefix(line, p)) {
                findings.push(format!(
                    "{}:{}: names {prefix}, a folder outside the checkout",
                    rel.display(),
                    line_no + 1
                ));
            }
        }
    }
    assert!(
        findings.is_empty(),
        "files that read outside the repository (a clone has nothing beside it; copy what is needed \
         into the repository):\n{}",
        findings.join("\n")
    );
}

#[test]
fn the_check_finds_a_crate_reading_a_folder_beside_the_checkout() {
    let root = workspace_root();
    let up = "..";
    let file = Path::new("bridge/src/message/tests.rs");
    // The line that made the decoder tests fail in a clone before the fixtures were copied in.
    let bad = format!(
        "PathBuf::from(env!(\"CARGO_MANIFEST_DIR\")).join(\"{up}/{up}/shared/fixtures/apollo\")"
    );
    let found = relative_escapes(&root, file, &format!("fn f() {{}}\n{bad}\n"));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].line, 2);
    assert!(
        found[0].text.contains("shared/fixtures/apollo"),
        "{found:?}"
    );
    // From the crate root one level up is the workspace root: allowed, as are ranges and struct updates.
    let fine = format!(
        "join(\"{up}/tests/fixtures/apollo\"); let s = &v[{up}n]; let c = Config {{ {up}Default::default() }};"
    );
    assert_eq!(relative_escapes(&root, file, &fine), Vec::new());
    // A script that climbs from its own folder to the root (`.ci/run`) stays inside.
    let script = format!("cd \"$(dirname \"$0\")/{up}\"");
    assert_eq!(
        relative_escapes(&root, Path::new(".ci/run"), &script),
        Vec::new()
    );
    // ... but not one more level.
    let beyond = format!("cd \"$(dirname \"$0\")/{up}/{up}/shared\"");
    assert_eq!(
        relative_escapes(&root, Path::new(".ci/run"), &beyond).len(),
        1
    );
    // Absolute paths to the checkout's surroundings.
    let top = ["", "srv1"].join("/");
    assert!(names_prefix(&format!("let p = \"{top}/shared/x\";"), &top));
    assert!(names_prefix(&format!("cd {top}"), &top));
    assert!(!names_prefix(&format!("let p = \"{top}0/x\";"), &top));
    assert!(!names_prefix(&format!("let p = \"/data{top}/x\";"), &top));
}

/// The files of the project: tracked and new ones (not ignored) in a git checkout, else every file outside `target/` and `.git/`.
fn project_files(root: &Path) -> Vec<PathBuf> {
    let listed = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .output()
        .ok()
        .filter(|out| out.status.success() && !out.stdout.is_empty());
    if let Some(out) = listed {
        return out
            .stdout
            .split(|b| *b == 0)
            .filter(|name| !name.is_empty())
            .map(|name| PathBuf::from(String::from_utf8_lossy(name).into_owned()))
            .collect();
    }
    let mut files = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let rel = dir.join(entry.file_name());
            let name = entry.file_name();
            if name == "target" || name == ".git" {
                continue;
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => dirs.push(rel),
                Ok(t) if t.is_file() => files.push(rel),
                _ => {}
            }
        }
    }
    files
}

/// Markdown, the `docs/` folder and licence texts: prose that may describe other places.
fn is_documentation(rel: &Path) -> bool {
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy().to_uppercase())
        .unwrap_or_default();
    rel.starts_with("docs")
        || rel.extension().is_some_and(|e| e == "md")
        || ["LICENSE", "COPYING", "NOTICE"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// Relative paths in `text` that leave the workspace root.
///
/// A relative path in the project is resolved against the crate root (`CARGO_MANIFEST_DIR`, the working
/// folder of tests and benchmarks) or against the file's own folder (`include_str!`, `$(dirname "$0")`).
/// A reference is reported when it climbs above the workspace root from one of those and does not reach an
/// existing file or folder inside the repository from the other.
fn relative_escapes(root: &Path, rel: &Path, text: &str) -> Vec<Escape> {
    let file_dir = rel.parent().unwrap_or(Path::new("")).to_path_buf();
    let crate_dir = file_dir
        .ancestors()
        .find(|dir| root.join(dir).join("Cargo.toml").is_file())
        .unwrap_or(Path::new(""))
        .to_path_buf();
    let mut found = Vec::new();
    for (line_no, line) in text.lines().enumerate() {
        for (n_up, tail) in parent_chains(line) {
            let resolved = [&crate_dir, &file_dir].map(|base| climb(base, n_up, &tail));
            let escapes = resolved.iter().any(Option::is_none);
            let reaches_inside = resolved.iter().flatten().any(|p| root.join(p).exists());
            if escapes && !reaches_inside {
                let shown = format!("{}{tail}", "../".repeat(n_up));
                found.push(Escape {
                    line: line_no + 1,
                    text: shown,
                });
            }
        }
    }
    found
}

/// Every chain of `..` segments in a line: how many levels it climbs and the path after it. A bare `..` counts only
/// with a slash beside it, so Rust's ranges (`a[..n]`) and struct updates (`..Default::default()`) are not
/// paths.
fn parent_chains(line: &str) -> Vec<(usize, String)> {
    let bytes = line.as_bytes();
    let is_path_byte = |b: u8| b.is_ascii_alphanumeric() || b"_-./".contains(&b);
    let mut chains = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        let starts = &bytes[i..i + 2] == b".."
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.'));
        if !starts {
            i += 1;
            continue;
        }
        let slash_before = i > 0 && bytes[i - 1] == b'/';
        let mut j = i;
        let mut n_up = 0;
        while bytes.get(j..j + 2) == Some(b"..")
            && bytes
                .get(j + 2)
                .is_none_or(|b| *b == b'/' || !is_path_byte(*b))
        {
            n_up += 1;
            j += 2;
            if bytes.get(j) == Some(&b'/') {
                j += 1;
            } else {
                break;
            }
        }
        let slash_after = j > 0 && bytes[j - 1] == b'/';
        if n_up == 0 || !(slash_before || slash_after) {
            i += 2;
            continue;
        }
        let tail_end = (j..bytes.len())
            .find(|&k| !is_path_byte(bytes[k]))
            .unwrap_or(bytes.len());
        let tail = line[j..tail_end].trim_end_matches(['/', '.']).to_string();
        chains.push((n_up, tail));
        i = tail_end.max(i + 2);
    }
    chains
}

/// `base` (relative to the root) up `n_up` levels then down `tail`; `None` when that leaves the root.
fn climb(base: &Path, n_up: usize, tail: &str) -> Option<PathBuf> {
    let parts: Vec<Component> = base.components().collect();
    let kept = parts.len().checked_sub(n_up)?;
    let mut path: PathBuf = parts[..kept].iter().collect();
    path.push(tail);
    Some(path)
}

/// The checkout's own absolute path and the folders around it, which a clone elsewhere does not have.
/// Top-level system folders (`/tmp`, `/home`, ...) are left out: naming them is not reading beside the
/// checkout.
fn outside_prefixes(root: &Path) -> Vec<String> {
    const SYSTEM: [&str; 10] = [
        "tmp", "home", "root", "usr", "var", "opt", "etc", "srv", "mnt", "dev",
    ];
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    root.ancestors()
        .filter(|dir| dir.parent().is_some())
        .filter(|dir| {
            let is_top_level = dir.parent() == Some(Path::new("/"));
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
            !(is_top_level && name.is_some_and(|n| SYSTEM.contains(&n.as_str())))
        })
        .map(|dir| dir.to_string_lossy().into_owned())
        .collect()
}

/// Whether `line` names `prefix` as a path of its own: `prefix` then a slash, a quote or the end.
fn names_prefix(line: &str, prefix: &str) -> bool {
    line.match_indices(prefix).any(|(at, _)| {
        let before_ok = line[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '-'));
        let after = line[at + prefix.len()..].chars().next();
        before_ok
            && after.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'))
    })
}
