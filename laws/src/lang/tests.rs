use proptest::prelude::*;

use super::atom::Atom;
use super::lawset::{LawSet, LawSource};
use crate::signals::{Signal, Signals};

fn parse(text: &str) -> Result<LawSet, super::error::ParseError> {
    LawSet::parse(&[LawSource { name: "t.law".into(), text: text.into() }])
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn lawbreaker_law38_parses_with_names_and_minimal_atoms() {
    let text = "
        // yellow light
        law38_sub2_1 = (trafficLightAhead.color == yellow & (stoplineAhead(0) | currentLane.number .+ 1 == 0))
                       -> F[0,2](speed > 0.5);
        law38_sub2_2 = (trafficLightAhead.color == yellow & stoplineAhead(3.5) & ~stoplineAhead(0.5)
                        & currentLane.number > 0) -> F[0,3](speed < 0.5);
        /* both */
        law38_sub2 = G(law38_sub2_1 & law38_sub2_2);
    ";
    let set = parse(text).unwrap();
    let names: Vec<_> = set.laws().iter().map(|l| l.name()).collect();
    assert_eq!(names, ["law38_sub2_1", "law38_sub2_2", "law38_sub2"]);
    let atoms: Vec<String> = set.laws()[2].atoms().iter().map(|a| a.to_string()).collect();
    assert_eq!(
        atoms,
        [
            "trafficLightAhead.color==2",
            "stoplineAhead<=0",
            "(currentLane.number .+ 1)==0",
            "speed<=0.5",
            "stoplineAhead<=3.5",
            "stoplineAhead<=0.5",
            "currentLane.number<=0",
            "speed<0.5",
        ]
    );
    assert!(set.laws()[1].text().starts_with("law38_sub2_2 = ("));
    assert!(set.laws()[1].text().ends_with(';'));
    assert_eq!(set.index_of("law38_sub2"), Some(2));
}

#[test]
fn precedence_follows_the_grammar() {
    // Prefix G binds tighter than ->; & binds tighter than |; | tighter than ->.
    let set = parse("a = G[0,1] hornOn -> lowBeamOn; b = hornOn | lowBeamOn & highBeamOn -> hornOn;").unwrap();
    assert_eq!(set.laws()[0].body().to_string(), "(G[0,1](hornOn==1) -> lowBeamOn==1)");
    assert_eq!(set.laws()[1].body().to_string(), "((hornOn==1 | (lowBeamOn==1 & highBeamOn==1)) -> hornOn==1)");
}

#[test]
fn time_literals_and_constants() {
    let set = parse("n = (Time >= 20:00 | Time <= 7:30) -> lowBeamOn;").unwrap();
    let atoms: Vec<String> = set.laws()[0].atoms().iter().map(|a| a.to_string()).collect();
    assert_eq!(atoms, ["Time<20", "Time<=7.5", "lowBeamOn==1"]);
}

#[test]
fn errors_name_the_place_and_what_was_expected() {
    assert_eq!(err("l = speed > ;"), "t.law:1:13: expected a signal, a number, a law name, '(' , '~', G, F or X but found ';'");
    assert_eq!(err("l = (hornOn\n;"), "t.law:2:1: expected ')' or an operator but found ';'");
    assert_eq!(err("l = stoplineAhead;"), "t.law:1:5: expected '(' and a distance after stoplineAhead, e.g. stoplineAhead(2)");
    assert_eq!(err("l = isLaneChanging -> hornOn;"), "t.law:1:5: signal isLaneChanging is not available from avguard frames");
    assert_eq!(err("l = speed;"), "t.law:1:5: expected a formula; this value needs a comparison (==, <, <=, >, >=, !=)");
    assert_eq!(err("l = nope;"), "t.law:1:5: unknown name 'nope': expected a signal, a constant or an earlier law");
    assert_eq!(err("l = hornOn; l = hornOn;"), "t.law:1:13: law 'l' is defined twice");
    assert_eq!(err("speed = hornOn;"), "t.law:1:1: 'speed' is reserved and cannot name a law");
    assert!(err("l = hornOn -> F lowBeamOn;").starts_with("t.law:1:15: law 'l': unbounded F inside the law body"));
    assert!(err("l = F[2,1] hornOn;").contains("is empty"));
    assert!(err("l = hornOn /* open").contains("unterminated"));
}

#[test]
fn names_are_visible_across_sources_in_order() {
    let a = LawSource { name: "a.law".into(), text: "x = hornOn;".into() };
    let b = LawSource { name: "b.law".into(), text: "y = x & lowBeamOn;".into() };
    assert!(LawSet::parse(&[a.clone(), b.clone()]).is_ok());
    assert!(LawSet::parse(&[b, a]).unwrap_err().to_string().starts_with("b.law:1:5"));
}

#[test]
fn atoms_parse_evaluate_and_round_trip() {
    let mut s = Signals::default();
    s.set(Signal::NpcAhead, 9.0);
    s.set(Signal::Speed, 0.5);
    for (text, canon, value) in [
        ("NPCAhead(10)", "NPCAhead<=10", true),
        ("speed < 0.5", "speed<0.5", false),
        ("0.5 >= speed", "speed<=0.5", true),
        ("PriorityNPCAhead", "PriorityNPCAhead==1", false),
        ("trafficLightAhead.color == green", "trafficLightAhead.color==3", false),
    ] {
        let a = Atom::parse(text).unwrap();
        assert_eq!(a.to_string(), canon);
        assert_eq!(a.eval(&s), value, "{text}");
        assert_eq!(Atom::parse(canon).unwrap(), a);
    }
    assert!(Atom::parse("hornOn & lowBeamOn").is_err());
}

fn text_strategy() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "G", "F", "X", "U", "[", "]", "(", ")", ",", ";", "=", "==", "<", "<=", "->", "~", "&", "|", ".+", "./",
        "0", "-1", "2.5", "20:00", "speed", "stoplineAhead", "NPCAhead.speed", "l", "m", "green", " ", "\n",
        "//", "/*", "*/", "isLaneChanging", ":", "@", "é",
    ]);
    prop_oneof![any::<String>(), prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())]
}

proptest! {
    #[test]
    fn bad_text_never_panics(text in text_strategy()) {
        let _ = parse(&text);
        let _ = Atom::parse(&text);
    }

    #[test]
    fn display_parses_back_to_the_same_formula(
        lhs in prop::sample::select(vec!["hornOn", "~lowBeamOn", "F[0,1] hornOn", "hornOn U[0,0.5] highBeamOn", "G[-1,2](speed >= 3)"]),
        op in prop::sample::select(vec!["&", "|", "->"]),
        rhs in prop::sample::select(vec!["speed > 3", "NPCAhead(2)", "X highBeamOn", "(currentLane.number ./ 2) != 1"]),
    ) {
        let first = parse(&format!("l = {lhs} {op} {rhs};")).unwrap();
        let printed = format!("l = {};", first.laws()[0].formula());
        let second = parse(&printed).unwrap();
        prop_assert_eq!(first.laws()[0].formula().to_string(), second.laws()[0].formula().to_string());
    }
}

#[test]
fn shipped_law_files_parse_and_compile() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "law"))
        .collect();
    paths.sort();
    let sources: Vec<LawSource> = paths
        .iter()
        .map(|p| LawSource { name: p.display().to_string(), text: std::fs::read_to_string(p).unwrap() })
        .collect();
    let set = LawSet::parse(&sources).unwrap();
    for name in ["law38_sub2", "law38", "law51_sub5", "law51", "law53", "no_collision", "p2g_rule38_2", "p2g_rule51_5", "p2g_rule53"] {
        assert!(set.index_of(name).is_some(), "{name} missing");
    }
    let ev = crate::Evaluator::new(&set, &crate::EvalConfig::default()).unwrap();
    let i = set.index_of("law51_sub5").unwrap();
    assert_eq!(ev.horizon(i), Some(20));
    assert!(ev.has_guard(i));
    let atoms: Vec<String> = set.laws()[i].atoms().iter().map(|a| a.to_string()).collect();
    assert_eq!(atoms, ["trafficLightAhead.color==1", "stoplineAhead<=2", "junctionAhead<=2", "NPCAhead<=0.5", "speed<0.5"]);
    assert_eq!(ev.horizon(set.index_of("p2g_rule53").unwrap()), Some(2000));
}
