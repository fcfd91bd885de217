use super::*;

/// Two copies of the shipped law folder at paths of different lengths.
fn two_copies() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../laws/specs");
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (
        tmp.path().join("a"),
        tmp.path().join("a much longer folder name/laws"),
    );
    for dir in [&a, &b] {
        std::fs::create_dir_all(dir).unwrap();
        for entry in std::fs::read_dir(&shipped).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    (tmp, a, b)
}

#[test]
fn sources_are_named_by_file_name_wherever_the_folder_is() {
    let (_tmp, a, b) = two_copies();
    let (from_a, from_b) = (read_sources(&a).unwrap(), read_sources(&b).unwrap());
    assert_eq!(from_a, from_b);
    assert!(from_a.iter().any(|s| s.name == "law38.law"), "{from_a:?}");
}

/// Regression (issue #10): the model embedded each law file's full path, so the same laws learned from two
/// checkouts gave different model bytes (and `model_hash`es).
#[test]
fn models_learned_from_two_copies_of_the_laws_are_byte_identical() {
    let (_tmp, a, b) = two_copies();
    let model = |dir: &Path| {
        let plan = monitor::Plan::with_default_properties(
            read_sources(dir).unwrap(),
            monitor::BuildConfig::default(),
        )
        .unwrap()
        .0;
        plan.build(plan.empty_counts()).unwrap().to_bytes()
    };
    assert!(model(&a) == model(&b));
}

#[test]
fn a_parse_error_names_the_file_by_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("bad.law"),
        "ok = G(speed < 10);\nbroken = G(speed < );\n",
    )
    .unwrap();
    let err = load(tmp.path()).unwrap_err().to_string();
    let expected = format!("{}:2:", tmp.path().join("bad.law").display());
    assert!(err.starts_with(&expected), "{err}");
}
