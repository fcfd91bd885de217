use proptest::prelude::*;

use super::atom::Atom;
use super::lawset::{LawSet, LawSource};
use crate::signals::{Signal, Signals};

fn parse(text: &str) -> Result<LawSet, super::error::ParseError> {
    LawSet::parse(&[LawSource {
        name: "t.law".into(),
        text: text.into(),
    }])
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
    let atoms: Vec<String> = set.laws()[2]
        .atoms()
        .iter()
        .map(|a| a.to_string())
        .collect();
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
    let set =
        parse("a = G[0,1] hornOn -> lowBeamOn; b = hornOn | lowBeamOn & highBeamOn -> hornOn;")
            .unwrap();
    assert_eq!(
        set.laws()[0].body().to_string(),
        "(G[0,1](hornOn==1) -> lowBeamOn==1)"
    );
    assert_eq!(
        set.laws()[1].body().to_string(),
        "((hornOn==1 | (lowBeamOn==1 & highBeamOn==1)) -> hornOn==1)"
    );
}

#[test]
fn time_literals_and_constants() {
    let set = parse("n = (Time >= 20:00 | Time <= 7:30) -> lowBeamOn;").unwrap();
    let atoms: Vec<String> = set.laws()[0]
        .atoms()
        .iter()
        .map(|a| a.to_string())
        .collect();
    assert_eq!(atoms, ["Time<20", "Time<=7.5", "lowBeamOn==1"]);
}

#[test]
fn errors_name_the_place_and_what_was_expected() {
    assert_eq!(
        err("l = speed > ;"),
        "t.law:1:13: expected a signal, a number, a law name, '(' , '~', G, F or X but found ';'"
    );
    assert_eq!(
        err("l = (hornOn\n;"),
        "t.law:2:1: expected ')' or an operator but found ';'"
    );
    assert_eq!(
        err("l = stoplineAhead;"),
        "t.law:1:5: expected '(' and a distance after stoplineAhead, e.g. stoplineAhead(2)"
    );
    assert_eq!(
        err("l = isLaneChanging -> hornOn;"),
        "t.law:1:5: signal isLaneChanging is not available from avguard frames"
    );
    assert_eq!(
        err("l = speed;"),
        "t.law:1:5: expected a formula; this value needs a comparison (==, <, <=, >, >=, !=)"
    );
    assert_eq!(
        err("l = nope;"),
        "t.law:1:5: unknown name 'nope': expected a signal, a constant or an earlier law"
    );
    assert_eq!(
        err("l = hornOn; l = hornOn;"),
        "t.law:1:13: law 'l' is defined twice"
    );
    assert_eq!(
        err("speed = hornOn;"),
        "t.law:1:1: 'speed' is reserved and cannot name a law"
    );
    assert!(err("l = hornOn -> F lowBeamOn;")
        .starts_with("t.law:1:15: law 'l': unbounded F inside the law body"));
    assert!(err("l = F[2,1] hornOn;").contains("is reversed"));
    assert!(err("l = hornOn /* open").contains("unterminated"));
}

/// Error messages stay one readable line: invisible characters are escaped, long names cut, and a
/// leading byte-order mark is no error at all.
#[test]
fn errors_show_odd_text_readably() {
    assert!(parse("\u{feff}l = G(speed < 30);").is_ok());
    let nul = err("l = G(speed < 30)\u{0};");
    assert!(nul.contains("unexpected character '\\u{0}'"), "{nul}");
    assert!(!nul.contains('\u{0}'), "{nul}");
    let bom = err("l = G(speed < 30);\u{feff}");
    assert!(bom.contains("'\\u{feff}'"), "{bom}");
    let long = "x".repeat(500_000);
    let said = err(&format!("l = G({long} < 3);"));
    assert!(said.len() < 300, "{} bytes", said.len());
    assert!(
        said.contains("… (500000 bytes)"),
        "{}",
        &said[..200.min(said.len())]
    );
}

#[test]
fn names_are_visible_across_sources_in_order() {
    let a = LawSource {
        name: "a.law".into(),
        text: "x = hornOn;".into(),
    };
    let b = LawSource {
        name: "b.law".into(),
        text: "y = x & lowBeamOn;".into(),
    };
    assert!(LawSet::parse(&[a.clone(), b.clone()]).is_ok());
    assert!(LawSet::parse(&[b, a])
        .unwrap_err()
        .to_string()
        .starts_with("b.law:1:5"));
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
        (
            "trafficLightAhead.color == green",
            "trafficLightAhead.color==3",
            false,
        ),
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
        "G",
        "F",
        "X",
        "U",
        "[",
        "]",
        "(",
        ")",
        ",",
        ";",
        "=",
        "==",
        "<",
        "<=",
        "->",
        "~",
        "&",
        "|",
        ".+",
        "./",
        "0",
        "-1",
        "2.5",
        "20:00",
        "speed",
        "stoplineAhead",
        "NPCAhead.speed",
        "l",
        "m",
        "green",
        " ",
        "\n",
        "//",
        "/*",
        "*/",
        "isLaneChanging",
        ":",
        "@",
        "é",
    ]);
    prop_oneof![
        any::<String>(),
        prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
    ]
}

proptest! {
    #[test]
    fn bad_text_never_panics(text in text_strategy()) {
        let _ = parse(&text);
        let _ = Atom::parse(&text);
    }

    #[test]
    fn display_parses_back_to_the_same_formula(
        lhs in prop::sample::select(vec!["hornOn", "~lowBeamOn", "F[0,1] hornOn", "hornOn U[0,0.5] highBeamOn", "G[1,2](speed >= 3)"]),
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
fn shipped_sources_are_the_law_files_of_specs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".law"))
        .collect();
    names.sort();
    let shipped = crate::shipped::sources();
    assert_eq!(
        shipped.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
        names
    );
    for s in &shipped {
        assert_eq!(s.text, std::fs::read_to_string(dir.join(&s.name)).unwrap());
    }
}

#[test]
fn shipped_law_files_parse_and_compile() {
    let set = LawSet::parse(&crate::shipped::sources()).unwrap();
    for name in [
        "law38_sub2",
        "law38",
        "law51_sub5",
        "law51",
        "law53",
        "no_collision",
        "p2g_rule38_2",
        "p2g_rule51_5",
        "p2g_rule53",
    ] {
        assert!(set.index_of(name).is_some(), "{name} missing");
    }
    let ev = crate::Evaluator::new(&set, &crate::EvalConfig::default()).unwrap();
    let i = set.index_of("law51_sub5").unwrap();
    assert_eq!(ev.horizon(i), Some(20));
    assert!(ev.has_guard(i));
    let atoms: Vec<String> = set.laws()[i]
        .atoms()
        .iter()
        .map(|a| a.to_string())
        .collect();
    assert_eq!(
        atoms,
        [
            "trafficLightAhead.color==1",
            "stoplineAhead<=2",
            "junctionAhead<=2",
            "NPCAhead<=0.5",
            "speed<0.5"
        ]
    );
    assert_eq!(ev.horizon(set.index_of("p2g_rule53").unwrap()), Some(2000));
}

// ---- limits (issue #11): every one is a clean error naming the place and the limit ----

#[test]
fn issue11_until_bound_of_1e8_seconds_is_refused() {
    // Was: "memory allocation of 8000000016 bytes failed" (abort) when compiled.
    let e = err("big = G((speed > 1) U[0,100000000] (speed < 0.5));");
    assert!(
        e.starts_with("t.law:1:25: interval bound 100000000 s exceeds the limit of 3600 s"),
        "{e}"
    );
}

#[test]
fn issue11_100000_nested_parentheses_are_refused() {
    // Was: "thread 'main' has overflowed its stack" (abort). Runs on a test thread (2 MiB stack).
    let text = format!(
        "deep = {}hornOn{};",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let e = err(&text);
    assert!(
        e.starts_with("t.law:1:72: formula nested deeper than the limit of 64 levels"),
        "{e}"
    );
}

#[test]
fn issue11_negative_interval_is_refused() {
    // Was: accepted, and a violation on the first frames of every run.
    let e = err("p = F[-1,-0.5] (speed < 1000);");
    assert!(
        e.starts_with("t.law:1:7: interval [-1,-0.5] has a negative bound"),
        "{e}"
    );
    assert!(err("p = hornOn -> F[-1,2] lowBeamOn;").contains("negative bound"));
    assert!(err("p = hornOn U[0,-1] lowBeamOn;").contains("negative bound"));
}

#[test]
fn long_operator_chains_count_as_nesting() {
    // Left-deep chains are built by loops, not recursion, but every later pass recurses over them.
    let chain = |op: &str, n: usize| format!("l = hornOn{};", format!(" {op} hornOn").repeat(n));
    assert!(err(&chain("&", 10_000)).contains("nested deeper than the limit of 64"));
    assert!(err(&chain("U[0,1]", 10_000)).contains("nested deeper than the limit of 64"));
    let arith = format!("l = speed{} < 3;", " .+ 1".repeat(100_000));
    assert!(err(&arith).contains("nested deeper than the limit of 64"));
    assert!(err(&format!("l = {}hornOn;", "~".repeat(100_000))).contains("nested deeper"));
    assert!(err(&format!("l = {}hornOn;", "G[0,1] ".repeat(100_000))).contains("nested deeper"));
}

#[test]
fn laws_used_by_name_cannot_double_without_bound() {
    // Each law uses the previous one twice: 2^40 nodes if nothing stopped it.
    let mut text = String::from("l0 = hornOn;\n");
    for i in 1..40 {
        text.push_str(&format!("l{i} = l{} & l{};\n", i - 1, i - 1));
    }
    let e = err(&text);
    assert!(
        e.contains("law too large: more than 10000 operators and operands"),
        "{e}"
    );
}

#[test]
fn oversized_text_and_numbers_are_refused() {
    let e = err(&format!("l = hornOn; // {}", "x".repeat(2 << 20)));
    assert!(e.contains("exceeds the limit of 1048576 bytes"), "{e}");
    let e = err(&format!("l = speed < 1{};", "0".repeat(400)));
    assert!(e.contains("is too large"), "{e}");
}

#[test]
fn formulas_at_the_limits_still_work() {
    // The deepest accepted formulas parse, print, compile, evaluate and drop on a 2 MiB test thread.
    let nested = format!(
        "a = hornOn -> {}lowBeamOn{};",
        "F[0,0.1](".repeat(31),
        ")".repeat(31)
    );
    let parens = format!("a = {}hornOn{};", "(".repeat(63), ")".repeat(63));
    let chain = format!("b = hornOn{};", " & lowBeamOn".repeat(62));
    let arith = format!("c = speed{} < 3;", " .+ 1".repeat(61));
    for text in [nested, parens, chain, arith] {
        let set = parse(&text).unwrap_or_else(|e| panic!("{e}"));
        let printed = format!("x = {};", set.laws()[0].formula());
        assert!(parse(&printed).is_ok(), "{printed}");
        let mut ev = crate::Evaluator::new(&set, &crate::EvalConfig::default()).unwrap();
        for _ in 0..60 {
            ev.step(&Signals::default());
        }
    }
}
