//! Embeds the shipped law files (`specs/*.law`, in file-name order) and `specs/properties.toml` into
//! `laws::shipped`, so tests, benches and tools read them without touching the file system at run time.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let specs =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("specs");
    println!("cargo:rerun-if-changed={}", specs.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&specs)
        .expect("laws/specs is readable")
        .map(|e| e.expect("laws/specs entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "law"))
        .collect();
    files.sort();
    let mut out =
        String::from("/// `(file name, text)` of every shipped law file, in file-name order.\n");
    out.push_str("pub const LAW_FILES: &[(&str, &str)] = &[\n");
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("UTF-8 file name");
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .expect("writing to a String");
    }
    out.push_str("];\n");
    let properties = specs.join("properties.toml");
    println!("cargo:rerun-if-changed={}", properties.display());
    writeln!(
        out,
        "/// The shipped `properties.toml`.\npub const PROPERTIES_TOML: &str = include_str!({:?});",
        properties.display().to_string()
    )
    .expect("writing to a String");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("shipped.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
