use super::*;

/// `a` then, under it, `b`: leaves 0.9 (a ∧ b), 0.4 (a ∧ ¬b), 0.1 (¬a).
fn two_level() -> Tree {
    Tree {
        nodes: vec![
            Node::Split {
                predicate: 0,
                yes: 1,
                no: 2,
            },
            Node::Split {
                predicate: 1,
                yes: 3,
                no: 4,
            },
            Node::Leaf(0.1),
            Node::Leaf(0.9),
            Node::Leaf(0.4),
        ],
    }
}

fn texts() -> Vec<String> {
    vec!["speed>10".into(), "acc<=-2".into()]
}

#[test]
fn a_walk_reads_the_leaf_of_the_frame_and_the_forest_averages_its_trees() {
    let t = two_level();
    assert_eq!(t.value(|i| [true, true][i]), 0.9);
    assert_eq!(t.value(|i| [true, false][i]), 0.4);
    assert_eq!(t.value(|i| [false, true][i]), 0.1);
    let stump = Tree {
        nodes: vec![
            Node::Split {
                predicate: 1,
                yes: 1,
                no: 2,
            },
            Node::Leaf(0.7),
            Node::Leaf(0.3),
        ],
    };
    let f = ForestShare::try_new(0.25, 30, texts(), vec![t, stump]).unwrap();
    // (0.9 + 0.7) / 2 and (0.1 + 0.3) / 2.
    assert!((f.value(|_| true) - 0.8).abs() < 1e-12);
    assert!((f.value(|_| false) - 0.2).abs() < 1e-12);
    // 0.75 · 0.4 + 0.25 · 0.8.
    assert!((f.mix(0.4, 0.8) - 0.5).abs() < 1e-12);
    assert_eq!(f.mix(1.0, 1.0), 1.0);
    assert_eq!(f.horizon_steps(), 30);
    assert_eq!(f.predicates(), texts().as_slice());
}

#[test]
fn malformed_forests_are_refused_with_their_fault() {
    let ok = || (0.5, 10, texts(), vec![two_level()]);
    let refused = |(w, h, p, t): (f64, u32, Vec<String>, Vec<Tree>), says: &str| {
        let e = ForestShare::try_new(w, h, p, t).unwrap_err().to_string();
        assert!(e.contains(says), "{e} lacks '{says}'");
    };
    assert!(ForestShare::try_new(0.5, 10, texts(), vec![two_level()]).is_ok());
    let (_, h, p, t) = ok();
    refused((1.5, h, p.clone(), t.clone()), "weight");
    refused((f64::NAN, h, p.clone(), t.clone()), "weight");
    refused((0.5, 0, p.clone(), t.clone()), "horizon");
    refused((0.5, h, p.clone(), Vec::new()), "0 trees");
    refused(
        (0.5, h, p.clone(), vec![two_level(); MAX_TREES + 1]),
        "trees",
    );
    refused(
        (0.5, h, p.clone(), vec![Tree { nodes: Vec::new() }]),
        "0 nodes",
    );
    // A child before its parent (a cycle) or outside the tree.
    let mut back = two_level();
    back.nodes[1] = Node::Split {
        predicate: 1,
        yes: 0,
        no: 4,
    };
    refused((0.5, h, p.clone(), vec![back]), "not after it");
    let mut outside = two_level();
    outside.nodes[1] = Node::Split {
        predicate: 1,
        yes: 3,
        no: 9,
    };
    refused((0.5, h, p.clone(), vec![outside]), "not after it");
    let mut far = two_level();
    far.nodes[0] = Node::Split {
        predicate: 7,
        yes: 1,
        no: 2,
    };
    refused((0.5, h, p.clone(), vec![far]), "out of range");
    let mut leaf = two_level();
    leaf.nodes[3] = Node::Leaf(1.2);
    refused((0.5, h, p.clone(), vec![leaf]), "forest leaf");
    let mut nan = two_level();
    nan.nodes[3] = Node::Leaf(f64::NAN);
    refused((0.5, h, p.clone(), vec![nan]), "forest leaf");
    let mut unused = p.clone();
    unused.push("jerk>1".into());
    refused((0.5, h, unused, t), "named by no split");
}

#[test]
fn a_stored_forest_reads_back_and_a_malformed_one_does_not() {
    let f = ForestShare::try_new(0.5, 30, texts(), vec![two_level()]).unwrap();
    let bytes = postcard::to_allocvec(&f).unwrap();
    assert_eq!(postcard::from_bytes::<ForestShare>(&bytes).unwrap(), f);
    // The same bytes with the weight 0.5 (little-endian f64, first field) made 2.
    let mut bad = bytes.clone();
    let half = 0.5f64.to_le_bytes();
    let at = bad.windows(8).position(|w| w == half).unwrap();
    bad[at..at + 8].copy_from_slice(&2.0f64.to_le_bytes());
    assert!(postcard::from_bytes::<ForestShare>(&bad).is_err());
    // Every truncation fails to read.
    for n in 0..bytes.len() {
        assert!(
            postcard::from_bytes::<ForestShare>(&bytes[..n]).is_err(),
            "{n}"
        );
    }
}

#[test]
fn an_invalid_walk_stops_instead_of_looping() {
    // Not constructible through `try_new`; `value` still ends.
    let cyclic = Tree {
        nodes: vec![Node::Split {
            predicate: 0,
            yes: 0,
            no: 0,
        }],
    };
    assert_eq!(cyclic.value(|_| true), 0.5);
    let dangling = Tree {
        nodes: vec![Node::Split {
            predicate: 0,
            yes: 5,
            no: 5,
        }],
    };
    assert_eq!(dangling.value(|_| false), 0.5);
}

/// A boosted forest's leaves are log-odds steps: negative ones are its own, not a bagged forest's; a
/// step or base beyond its bound, or not finite, is refused by name.
#[test]
fn a_boosted_forest_holds_log_odds_steps_within_their_bounds() {
    let tree = |v: f64| crate::forest::one_split(v, 0.1);
    let one = vec!["speed>10".to_string()];
    let f = ForestShare::try_new_boosted(1.0, 30, one.clone(), vec![tree(-2.0), tree(0.5)], 0.3)
        .unwrap();
    // σ(0.3 − 2 + 0.5) and σ(0.3 + 0.1 + 0.1), by hand: 1 / (1 + e^1.2) and 1 / (1 + e^−0.5).
    assert!((f.value(|_| true) - 0.231_475_217).abs() < 1e-8);
    assert!((f.value(|_| false) - 0.622_459_331).abs() < 1e-8);
    assert!(ForestShare::try_new(1.0, 30, one.clone(), vec![tree(-2.0)]).is_err());
    for (leaf, base, says) in [
        (MAX_BOOST_LEAF + 0.5, 0.0, "log-odds step 10.5"),
        (f64::NAN, 0.0, "log-odds step NaN"),
        (0.5, -MAX_BOOST_BASE - 1.0, "base log-odds -41"),
        (0.5, f64::INFINITY, "base log-odds inf"),
    ] {
        let e = ForestShare::try_new_boosted(1.0, 30, one.clone(), vec![tree(leaf)], base)
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{e}");
    }
    // The weight keeps the forest boosted.
    let g = f.clone().with_weight(0.25).unwrap();
    assert_eq!(
        (g.boost_base(), g.value(|_| true)),
        (Some(0.3), f.value(|_| true))
    );
}

/// A forest of both kinds: its value is `a · mean(bagged leaves) + (1 − a) · σ(base + Σ boosted leaves)`
/// by hand; a bagged part is refused on a forest that is not boosted, with a share outside (0, 1), of no
/// tree or of every tree, or over a leaf that is not a share; the weight keeps the part.
#[test]
fn a_forest_of_both_kinds_mixes_its_bagged_mean_and_its_boosted_value() {
    let tree = crate::forest::one_split;
    let one = vec!["speed>10".to_string()];
    let bagged = vec![tree(0.8, 0.2), tree(0.6, 0.0)];
    let boosted = vec![tree(-2.0, 0.1), tree(0.5, 0.1)];
    let f = ForestShare::try_new_both(
        0.5,
        30,
        one.clone(),
        (bagged.clone(), boosted.clone()),
        0.3,
        0.25,
    )
    .unwrap();
    assert_eq!(
        f.bagged_part(),
        Some(crate::forest::BaggedPart {
            trees: 2,
            share: 0.25
        })
    );
    assert_eq!((f.trees().len(), f.boost_base()), (4, Some(0.3)));
    // Holds: bagged mean 0.7, boosted σ(0.3 − 2 + 0.5) = 1 / (1 + e^1.2) = 0.231475217;
    // 0.25 · 0.7 + 0.75 · 0.231475217 = 0.348606413.
    assert!((f.value(|_| true) - 0.348_606_413).abs() < 1e-8);
    // Does not: bagged mean 0.1, boosted σ(0.5) = 0.622459331; 0.025 + 0.466844498 = 0.491844498.
    assert!((f.value(|_| false) - 0.491_844_498).abs() < 1e-8);
    let g = f.clone().with_weight(0.25).unwrap();
    assert_eq!(
        (g.bagged_part(), g.value(|_| true), g.weight()),
        (f.bagged_part(), f.value(|_| true), 0.25)
    );
    let both = |bagged: Vec<Tree>, boosted: Vec<Tree>, share: f64| {
        ForestShare::try_new_both(0.5, 30, one.clone(), (bagged, boosted), 0.3, share)
            .unwrap_err()
            .to_string()
    };
    for (e, says) in [
        (
            both(bagged.clone(), boosted.clone(), 0.0),
            "bagged share 0 is not in (0, 1)",
        ),
        (
            both(bagged.clone(), boosted.clone(), 1.0),
            "bagged share 1 is not in (0, 1)",
        ),
        (
            both(bagged.clone(), boosted.clone(), f64::NAN),
            "bagged share NaN",
        ),
        (
            both(Vec::new(), boosted.clone(), 0.5),
            "bagged part of 0 trees in a forest of 2",
        ),
        (
            both(vec![tree(1.5, 0.1)], boosted.clone(), 0.5),
            "forest leaf",
        ),
    ] {
        assert!(e.contains(says), "{e}");
    }
    let plain = ForestShare::try_new(0.5, 30, one.clone(), bagged.clone()).unwrap();
    let part = crate::forest::BaggedPart {
        trees: 1,
        share: 0.5,
    };
    let e = plain.with_bagged_part(Some(part)).unwrap_err().to_string();
    assert!(e.contains("not boosted"), "{e}");
    let boosted_only = ForestShare::try_new_boosted(0.5, 30, one, boosted, 0.3).unwrap();
    let every = crate::forest::BaggedPart {
        trees: 2,
        share: 0.5,
    };
    let e = boosted_only
        .clone()
        .with_bagged_part(Some(every))
        .unwrap_err()
        .to_string();
    assert!(e.contains("bagged part of 2 trees in a forest of 2"), "{e}");
    // No part: the boosted forest as it was.
    assert_eq!(
        boosted_only.clone().with_bagged_part(None).unwrap(),
        boosted_only
    );
}
