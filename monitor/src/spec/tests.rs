use super::*;
use laws::LawSource;

fn set() -> LawSet {
    LawSet::parse(&[LawSource {
        name: "t".into(),
        text: "no_collision = G(collision == 0);\n\
               slow = G(NPCAhead(10) -> F[0,1](speed < 0.5));\n\
               fast = G(speed <= 30);\n"
            .into(),
    }])
    .unwrap()
}

#[test]
fn default_property_is_law_atoms_plus_window_with_unsafe_first() {
    let p = PropertySpec::for_law("slow").resolve(&set()).unwrap();
    assert_eq!(p.predicates, ["slow.w", "NPCAhead<=10", "speed<0.5"]);
    assert_eq!(p.unsafe_bit, 0);
}

#[test]
fn toml_properties_with_related_laws_extra_atoms_and_an_unsafe_atom() {
    let specs = parse_properties_toml(
        r#"
        [[property]]
        name = "crash"
        law = "no_collision"
        law_atoms = false
        unsafe = "collision"
        related_laws = ["fast"]
        extra_atoms = ["NPCAhead(10)", "speed > 30", "NPCAhead.ttc < 2"]
        "#,
    )
    .unwrap();
    let p = specs[0].resolve(&set()).unwrap();
    assert_eq!(p.name, "crash");
    assert_eq!(p.law, "no_collision");
    // `speed > 30` is the negation of fast's atom `speed<=30`: one predicate.
    assert_eq!(
        p.predicates,
        [
            "collision==1",
            "speed<=30",
            "fast.w",
            "NPCAhead<=10",
            "NPCAhead.ttc<2"
        ]
    );
}

#[test]
fn bad_declarations_give_clear_errors() {
    let e = |toml: &str| match parse_properties_toml(toml) {
        Err(e) => e.to_string(),
        Ok(specs) => specs[0].resolve(&set()).unwrap_err().to_string(),
    };
    assert!(e("[[property]]\nlaw = \"nope\"").contains("unknown law 'nope'"));
    assert!(e("[[property]]\nlaw = \"slow\"\nrelated_laws = [\"x\"]")
        .contains("unknown related law 'x'"));
    assert!(
        e("[[property]]\nlaw = \"slow\"\nextra_atoms = [\"warp > 9\"]").contains("atom 'warp > 9'")
    );
    let unknown = e("[[property]]\nlaw = \"slow\"\ncolour = 1");
    assert!(
        unknown.contains("line 3, column 1: unknown field `colour`") && !unknown.contains('\n'),
        "{unknown}"
    );
    let up_two = ["..", "..", "escaped"].join("/");
    for bad in [up_two.as_str(), "/tmp/abs", "", ".x"] {
        let said = e(&format!("[[property]]\nname = {bad:?}\nlaw = \"slow\""));
        assert!(said.contains("property name"), "{bad:?}: {said}");
    }
    assert!(e("[[property]]\nlaw = \"slow\"\n[[property]]\nlaw = \"slow\"").contains("twice"));
    assert!(e("").contains("no [[property]]"));
    let many: Vec<String> = (1..=12).map(|i| format!("\"speed < {i}\"")).collect();
    let text = format!(
        "[[property]]\nlaw = \"slow\"\nextra_atoms = [{}]",
        many.join(",")
    );
    assert!(
        e(&text).contains("more than the 12 allowed"),
        "{}",
        e(&text)
    );
}

#[test]
fn the_shipped_properties_file_resolves_within_the_predicate_cap() {
    let set = laws::shipped::law_set();
    let specs = parse_properties_toml(laws::shipped::PROPERTIES_TOML).unwrap();
    let resolved = resolve_all(&specs, &set).unwrap();
    let names: Vec<&str> = resolved.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "law38_sub2_2",
            "p2g_law38_sub2",
            "law51_sub5",
            "law53",
            "law52",
            "law45",
            "no_collision"
        ]
    );
    for p in &resolved {
        assert!(p.predicates.len() <= MAX_PROPERTY_PREDICATES, "{}", p.name);
    }
    let nc = resolved.last().unwrap();
    assert_eq!(nc.predicates.len(), 11);
    assert_eq!(nc.predicates[0], "collision==1");
}

#[test]
fn obligation_predicates_resolve_to_canonical_texts() {
    let specs = parse_properties_toml(
        r#"
        [[property]]
        law = "slow"
        extra_atoms = ["slow.pending", "slow.pending > 1.5", " slow.pending>2 "]
        "#,
    )
    .unwrap();
    let p = specs[0].resolve(&set()).unwrap();
    assert_eq!(
        p.predicates,
        [
            "slow.w",
            "NPCAhead<=10",
            "speed<0.5",
            "slow.pending",
            "slow.pending>1.5",
            "slow.pending>2"
        ]
    );
    let e = |extra: &str| {
        let toml = format!("[[property]]\nlaw = \"slow\"\nextra_atoms = [\"{extra}\"]");
        parse_properties_toml(&toml).unwrap()[0]
            .resolve(&set())
            .unwrap_err()
            .to_string()
    };
    assert!(e("fast.pending").contains("no future-time obligation"));
    assert!(e("nope.pending > 1").contains("unknown law 'nope'"));
    assert!(e("slow.pending > -1").contains("expected a number"));
    // Thresholds in frames: more than 1.5 s at 10 Hz is more than 15 frames.
    let p = PendingPredicate::parse("slow.pending>1.5")
        .unwrap()
        .unwrap();
    assert_eq!(p.more_than_frames(0.1), Some(15));
    assert_eq!(
        PendingPredicate::parse("slow.pending")
            .unwrap()
            .unwrap()
            .more_than_frames(0.1),
        None
    );
    // Atoms are not obligation predicates.
    assert!(PendingPredicate::parse("speed < 3").is_none());
}
