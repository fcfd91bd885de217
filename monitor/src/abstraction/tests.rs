use super::*;
use crate::training::parse_laws;

fn shipped_laws() -> Vec<LawText> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../laws/specs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "law"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| LawText {
            name: p.file_name().unwrap().to_string_lossy().into_owned(),
            text: std::fs::read_to_string(p).unwrap(),
        })
        .collect()
}

#[test]
fn every_shipped_law_survives_the_reduced_re_parse_unchanged() {
    let laws = shipped_laws();
    let full = parse_laws(&laws).unwrap();
    let preds: Vec<Vec<String>> = full
        .laws()
        .iter()
        .map(|l| vec![format!("{}.w", l.name())])
        .collect();
    let defs: Vec<PropertyDef<'_>> = full
        .laws()
        .iter()
        .zip(&preds)
        .map(|(l, p)| PropertyDef {
            name: l.name(),
            law: l.name(),
            predicates: p,
            unsafe_bit: 0,
        })
        .collect();
    let c = Compiled::new(&laws, &defs, 0.1, 100).unwrap();
    assert_eq!(c.laws().laws().len(), full.laws().len());
    for law in full.laws() {
        let i = c.laws().index_of(law.name()).unwrap();
        // Equal texts: equal trees up to source positions (Display prints every node).
        let r = &c.laws().laws()[i];
        assert_eq!(r.formula().to_string(), law.formula().to_string());
        assert_eq!(r.body().to_string(), law.body().to_string());
        assert_eq!(r.atoms(), law.atoms(), "{}", law.name());
    }
}

#[test]
fn only_the_needed_laws_are_evaluated() {
    let laws = shipped_laws();
    let preds = vec![
        "no_collision.w".to_string(),
        "law52.w".to_string(),
        "speed<0.5".into(),
    ];
    let defs = [PropertyDef {
        name: "p",
        law: "no_collision",
        predicates: &preds,
        unsafe_bit: 0,
    }];
    let c = Compiled::new(&laws, &defs, 0.1, 100).unwrap();
    let names: Vec<&str> = c.laws().laws().iter().map(|l| l.name()).collect();
    assert_eq!(names, ["no_collision", "law52"]);
}

#[test]
fn unknown_laws_and_bad_predicates_are_named() {
    let laws = shipped_laws();
    let preds = vec!["nope.w".to_string()];
    let bad_law = [PropertyDef {
        name: "p",
        law: "law99",
        predicates: &preds,
        unsafe_bit: 0,
    }];
    let e = Compiled::new(&laws, &bad_law, 0.1, 100)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown law 'law99'"), "{e}");
    let bad_pred = [PropertyDef {
        law: "law52",
        ..bad_law[0]
    }];
    let e = Compiled::new(&laws, &bad_pred, 0.1, 100)
        .unwrap_err()
        .to_string();
    assert!(e.contains("predicate 'nope.w'"), "{e}");
}

#[test]
fn antecedents_of_implications_and_conjunctions() {
    let laws = [LawText {
        name: "t".into(),
        text: "a = G((speed > 5 -> F[0,1](speed < 1)) & (NPCAhead(3) -> speed < 2));\n\
               b = G(collision == 0);\n\
               c = G(F[0,1](speed > 5) -> speed < 2);"
            .into(),
    }];
    let set = parse_laws(&laws).unwrap();
    let count = |name: &str| {
        let mut out = Vec::new();
        antecedents(set.laws()[set.index_of(name).unwrap()].body(), &mut out);
        out.len()
    };
    assert_eq!((count("a"), count("b"), count("c")), (2, 0, 0));
}
