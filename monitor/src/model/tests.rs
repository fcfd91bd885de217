use super::*;
use crate::counts::Counts;
use crate::domain::Domain;
use crate::property::BuildConfig;
use crate::StateId;
use laws::perception::RoadUserCorrection;

fn small_model() -> Model {
    small_model_named("no_collision").unwrap()
}

/// [`small_model`] with its property called `name`.
fn small_model_named(name: &str) -> Result<Model, ModelError> {
    let preds: Vec<String> = ["collision", "speed < 0.5", "NPCAhead(10)"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let cfg = BuildConfig {
        horizons_steps: vec![1, 3],
        ..BuildConfig::default()
    };
    let d = PropertyModel::domain_for(&preds, 0, &cfg).unwrap();
    let mut c = Counts::new(d.n_states());
    let done = d.done();
    for trace in [
        vec![0b000, 0b100, 0b100, 0b001],
        vec![0b010, 0b000, 0b000, done],
        vec![0b000, 0b100, 0b110, 0b110, done],
    ] {
        c.observe_trace(&d, &trace).unwrap();
    }
    let p = PropertyModel::build(name, preds, 0, c, &cfg).unwrap();
    Model::try_new(
        vec![LawSource {
            name: "a.law".into(),
            text: "no_collision = G(collision == 0);".into(),
        }],
        vec![p],
    )
}

/// A property's name names files (`export` writes `DIR/NAME.tra`), so a model whose property name is
/// not a plain file-name stem is refused, built or read.
#[test]
fn property_names_that_are_not_plain_file_names_are_refused() {
    for bad in [
        "../escaped",
        "/tmp/abs",
        "",
        ".hidden",
        "a/b",
        "x y",
        "a\\b",
    ] {
        let err = small_model_named(bad).unwrap_err().to_string();
        assert!(err.contains("property name"), "{bad:?}: {err}");
    }
    let long = "n".repeat(129);
    let err = small_model_named(&long).unwrap_err().to_string();
    assert!(
        err.contains("above the limit of 128") && err.len() < 300,
        "{err}"
    );
    for good in ["no_collision", "law38_sub2_2", "p2g-law.38", "X1"] {
        // (a name other than its law's may be refused for that, never for its spelling)
        if let Err(e) = small_model_named(good) {
            assert!(!e.to_string().contains("property name"), "{good}: {e}");
        }
    }
    // The same name written into a model file's bytes (same length) is refused on reading.
    // (postcard stores a string as its length, here 12, then its bytes)
    let mut forged = small_model().to_bytes();
    let mut replaced = 0;
    while let Some(at) = forged.windows(13).position(|w| w == b"\x0cno_collision") {
        forged[at + 1..at + 13].copy_from_slice(b"../collision");
        replaced += 1;
    }
    assert!(replaced >= 1);
    let err = Model::from_bytes(&forged).unwrap_err().to_string();
    assert!(err.contains("property name \"../collision\""), "{err}");
}

/// The chain of [`small_model`] with `speed < 0.5` as its unsafe predicate (`no_stop`): not a
/// collision property, so it takes neither an enforcement calibration nor an RSS tuning.
fn no_stop() -> PropertyModel {
    let collision = small_model();
    let p = &collision.properties()[0];
    let cfg = BuildConfig {
        horizons_steps: vec![1, 3],
        ..BuildConfig::default()
    };
    let d = PropertyModel::domain_for(p.predicates(), 1, &cfg).unwrap();
    let mut c = Counts::new(d.n_states());
    c.observe_trace(&d, &[0b000, 0b100, 0b010]).unwrap();
    PropertyModel::build("no_stop", p.predicates().to_vec(), 1, c, &cfg).unwrap()
}

/// A model of [`no_stop`] alone, with its law.
fn model_of_no_stop(p: PropertyModel) -> Model {
    let law = LawSource {
        name: "b.law".into(),
        text: "no_stop = G(speed >= 0.5);".into(),
    };
    Model::try_new(vec![law], vec![p]).unwrap()
}

#[test]
fn round_trips_through_bytes() {
    let m = small_model();
    let back = Model::from_bytes(&m.to_bytes()).unwrap();
    assert_eq!(back, m);
    let p = back.property("no_collision").unwrap();
    assert_eq!(p.n_states(), 9);
    assert_eq!(p.table().eventually(1), Some(1.0));
    assert_eq!(p.table().eventually(8), Some(0.0));
    let calm = p.table().eventually(0).unwrap();
    assert!(calm > 0.0 && calm < 1.0);
    assert!(p.risk_upper_bound(0).unwrap() >= calm);
    assert_eq!(back.laws()[0].name, "a.law");
}

#[test]
fn rejects_foreign_future_truncated_and_corrupt_files() {
    let bytes = as_v13(&small_model());
    assert!(matches!(
        Model::from_bytes(b"PK\x03\x04 a zip file"),
        Err(ModelError::NotAModel)
    ));
    let mut future = bytes.clone();
    future[16] = (crate::model::FORMAT_VERSION + 1) as u8;
    assert!(matches!(
        Model::from_bytes(&future),
        Err(ModelError::Version { found, .. }) if found == crate::model::FORMAT_VERSION + 1
    ));
    // After the properties, the forests (one property, without one), then the enforcement
    // calibrations, the RSS tunings and the forests' bagged parts (likewise none).
    assert_eq!(bytes[bytes.len() - 8..], [1, 0, 1, 0, 1, 0, 1, 0]);
    let before_bagged_parts = &bytes[..bytes.len() - 2];
    let before_rss_tunings = &bytes[..bytes.len() - 4];
    let before_enforcements = &bytes[..bytes.len() - 6];
    let before_forests = &bytes[..bytes.len() - 8];
    // Versions 7 (no conjunction predicates), 8 (no forests), 9 (no enforcement calibrations), 10
    // (no RSS tunings), 11 (no boost field: no forest here) and 12 (no bagged parts) still read as they
    // are; 6 does not.
    for (version, body) in [
        (7, before_forests),
        (8, before_forests),
        (9, before_enforcements),
        (10, before_rss_tunings),
        (11, before_bagged_parts),
        (12, before_bagged_parts),
    ] {
        let mut old = body.to_vec();
        old[16] = version;
        assert_eq!(
            Model::from_bytes(&old).unwrap(),
            small_model(),
            "v{version}"
        );
        // With the next version's tail after all, those bytes trail.
        old.extend_from_slice(&[1, 0]);
        assert!(
            matches!(Model::from_bytes(&old), Err(ModelError::Decode(_))),
            "v{version}"
        );
    }
    let mut six = bytes.clone();
    six[16] = 6;
    let err = Model::from_bytes(&six).unwrap_err();
    assert!(matches!(err, ModelError::Version { found: 6, .. }));
    assert!(err.to_string().contains("versions 7 to 16"), "{err}");
    // Forests, or enforcement calibrations, for another number of properties, and none at all.
    let mut two = before_forests.to_vec();
    two.extend_from_slice(&[2, 0, 0, 1, 0]);
    let err = Model::from_bytes(&two).unwrap_err();
    assert!(
        err.to_string().contains("2 forests for 1 properties"),
        "{err}"
    );
    let mut two = before_enforcements.to_vec();
    two.extend_from_slice(&[2, 0, 0]);
    let err = Model::from_bytes(&two).unwrap_err();
    assert!(
        err.to_string()
            .contains("2 enforcement calibrations for 1 properties"),
        "{err}"
    );
    let mut two = before_rss_tunings.to_vec();
    two.extend_from_slice(&[2, 0, 0]);
    let err = Model::from_bytes(&two).unwrap_err();
    assert!(
        err.to_string().contains("2 RSS tunings for 1 properties"),
        "{err}"
    );
    for cut in [before_forests, before_enforcements, before_rss_tunings] {
        assert!(matches!(Model::from_bytes(cut), Err(ModelError::Decode(_))));
    }
    assert!(matches!(
        Model::from_bytes(&bytes[..bytes.len() - 9]),
        Err(ModelError::Decode(_))
    ));
    let mut trailing = bytes.clone();
    trailing.push(0);
    assert!(matches!(
        Model::from_bytes(&trailing),
        Err(ModelError::Decode(_))
    ));
    // Inside the encoded matrix, halve the last probability (the absorbing `done` row's 1.0): the bytes
    // still decode structurally, and the row-sum validator must reject them.
    let m = small_model();
    let dtmc = postcard::to_stdvec(m.properties()[0].dtmc()).unwrap();
    let start = bytes
        .windows(dtmc.len())
        .position(|w| w == dtmc.as_slice())
        .unwrap();
    let pos = start + dtmc.len() - 8;
    assert_eq!(bytes[pos..pos + 8], 1.0f64.to_le_bytes());
    let mut corrupt = bytes.clone();
    corrupt[pos..pos + 8].copy_from_slice(&0.5f64.to_le_bytes());
    assert!(matches!(
        Model::from_bytes(&corrupt),
        Err(ModelError::Decode(_))
    ));
}

#[test]
fn duplicate_property_names_are_rejected() {
    let m = small_model();
    let p = m.properties()[0].clone();
    assert!(Model::try_new(vec![], vec![p.clone(), p]).is_err());
}

#[test]
fn risk_from_learned_counts_matches_a_hand_solution() {
    // Only valid transitions seen; α = 1 spreads over valid successors. Check one row by hand and the
    // absorbing rows, then that the table satisfies x = P x on the live states.
    let m = small_model();
    let p = &m.properties()[0];
    let d = p.domain().unwrap();
    let x = p.table().eventually_all();
    for s in 0..p.n_states() as StateId {
        if d.is_valid_state(s) && !d.is_terminal(s) {
            let (cols, probs) = p.dtmc().row(s);
            let px: f64 = cols
                .iter()
                .zip(probs)
                .map(|(&j, &q)| q * x[j as usize])
                .sum();
            assert!((px - x[s as usize]).abs() < 1e-12, "state {s}");
        }
    }
    // State 0b000: observed 000->100 (x2), 000->000 (x1), 000->done (x1); every successor in the smoothing
    // support (which includes these three) gets α = 1.
    let mut support = Vec::new();
    d.smoothing_support(0, &mut support);
    assert!([0b100, 0, d.done()].iter().all(|s| support.contains(s)));
    let total = 4.0 + support.len() as f64;
    assert!((p.dtmc().prob(0, 0b100) - 3.0 / total).abs() < 1e-15);
}

/// A forest's split predicates are checked like the predicates: one that does not read fails the model,
/// naming the property; one that reads is carried through the file.
#[test]
fn a_forest_s_splits_must_read_against_the_laws() {
    use crate::forest::{ForestShare, Node, Tree};
    let m = small_model();
    let forest = |split: &str| {
        ForestShare::try_new(
            0.5,
            30,
            vec![split.to_string()],
            vec![Tree {
                nodes: vec![
                    Node::Split {
                        predicate: 0,
                        yes: 1,
                        no: 2,
                    },
                    Node::Leaf(0.8),
                    Node::Leaf(0.1),
                ],
            }],
        )
        .unwrap()
    };
    let with = |split: &str| {
        Model::try_new(
            m.laws().to_vec(),
            vec![m.properties()[0].clone().with_forest(Some(forest(split)))],
        )
    };
    let err = with("speed <=").unwrap_err().to_string();
    assert!(
        err.contains("no_collision") && err.contains("forest split"),
        "{err}"
    );
    assert!(with("nosuchlaw.w").is_err());
    let ok = with("speed > 3 & NPCAhead(10)").unwrap();
    let back = Model::from_bytes(&ok.to_bytes()).unwrap();
    assert_eq!(back, ok);
    assert_eq!(
        back.properties()[0].forest(),
        Some(&forest("speed > 3 & NPCAhead(10)"))
    );
    // A forest belongs to the property, not to an ensemble member (whose forest no file would carry).
    let p = m.properties()[0].clone();
    let member = p.clone().with_forest(Some(forest("speed > 3")));
    let err = p
        .clone()
        .with_members(vec![member])
        .unwrap_err()
        .to_string();
    assert!(err.contains("forest of its own"), "{err}");
    assert!(p.with_members(vec![m.properties()[0].clone()]).is_ok());
}

/// A boosted forest is carried through the file with its base; a file of format 11, whose forests have
/// no boost field, still reads, its forest bagged; the same bytes marked 12 do not.
#[test]
fn a_boosted_forest_round_trips_and_a_format_11_forest_reads_as_bagged() {
    use crate::forest::{ForestShare, Tree};
    let m = small_model();
    let tree = crate::forest::one_split;
    let splits = vec!["speed > 3".to_string()];
    let boosted =
        ForestShare::try_new_boosted(0.25, 30, splits.clone(), vec![tree(0.7, -0.4)], -1.5)
            .unwrap();
    let with = |f: ForestShare| {
        Model::try_new(
            m.laws().to_vec(),
            vec![m.properties()[0].clone().with_forest(Some(f))],
        )
        .unwrap()
    };
    let ok = with(boosted.clone());
    let back = Model::from_bytes(&ok.to_bytes()).unwrap();
    assert_eq!(back, ok);
    let f = back.properties()[0].forest().unwrap();
    assert_eq!(f.boost_base(), Some(-1.5));
    // σ(−1.5 + 0.7) and σ(−1.5 − 0.4), by hand: 1 / (1 + e^0.8) and 1 / (1 + e^1.9).
    assert!((f.value(|_| true) - 0.310_025_518).abs() < 1e-8);
    assert!((f.value(|_| false) - 0.130_108_474).abs() < 1e-8);
    // Format 11: the forest without its boost field, then no enforcement calibration or RSS tuning.
    #[derive(serde::Serialize)]
    struct V11<'a> {
        weight: f64,
        horizon_steps: u32,
        predicates: &'a [String],
        trees: &'a [Tree],
    }
    let bagged = vec![tree(0.7, 0.2)];
    let bytes = as_v13(&m);
    let mut v11 = bytes[..bytes.len() - 8].to_vec();
    v11.extend(
        postcard::to_stdvec(&vec![Some(V11 {
            weight: 0.5,
            horizon_steps: 30,
            predicates: &splits,
            trees: &bagged,
        })])
        .unwrap(),
    );
    v11.extend_from_slice(&[1, 0, 1, 0]);
    v11[16] = 11;
    let read = Model::from_bytes(&v11).unwrap();
    let want = ForestShare::try_new(0.5, 30, splits.clone(), bagged).unwrap();
    assert_eq!(read, with(want));
    assert_eq!(read.properties()[0].forest().unwrap().boost_base(), None);
    v11[16] = 12;
    assert!(matches!(
        Model::from_bytes(&v11),
        Err(ModelError::Decode(_))
    ));
}

/// A forest of both kinds is carried through the file, its bagged part in the part after the RSS tunings;
/// a bagged part for a property without a forest, or one its forest refuses, fails the file by name.
#[test]
fn a_forest_of_both_kinds_round_trips_and_a_stray_bagged_part_is_refused() {
    use crate::forest::{BaggedPart, ForestShare};
    let m = small_model();
    let tree = crate::forest::one_split;
    let splits = vec!["speed > 3".to_string()];
    let f = ForestShare::try_new_both(
        0.375,
        30,
        splits,
        (vec![tree(0.7, 0.2)], vec![tree(0.5, -0.4)]),
        -1.5,
        1.0 / 3.0,
    )
    .unwrap();
    let ok = Model::try_new(
        m.laws().to_vec(),
        vec![m.properties()[0].clone().with_forest(Some(f.clone()))],
    )
    .unwrap();
    let bytes = as_v13(&ok);
    let back = Model::from_bytes(&bytes).unwrap();
    assert_eq!(back, ok);
    assert_eq!(back.properties()[0].forest(), Some(&f));
    // The part is the file's last: one property, `Some`, 1 tree, share ⅓ as 8 little-endian bytes.
    let part = postcard::to_stdvec(&vec![Some(BaggedPart {
        trees: 1,
        share: 1.0 / 3.0,
    })])
    .unwrap();
    assert!(bytes.ends_with(&part));
    // Read as format 12 without that part, the forest is boosted alone.
    let mut v12 = bytes[..bytes.len() - part.len()].to_vec();
    v12[16] = 12;
    let read = Model::from_bytes(&v12).unwrap();
    let f12 = read.properties()[0].forest().unwrap();
    assert_eq!((f12.bagged_part(), f12.trees().len()), (None, 2));
    // A part for a property without a forest; a part whose share is out of range.
    let plain = as_v13(&m);
    let mut stray = plain[..plain.len() - 2].to_vec();
    stray.extend(&part);
    let err = Model::from_bytes(&stray).unwrap_err().to_string();
    assert!(err.contains("bagged part without a forest"), "{err}");
    let mut bad = bytes[..bytes.len() - part.len()].to_vec();
    bad.extend(
        postcard::to_stdvec(&vec![Some(BaggedPart {
            trees: 1,
            share: 1.5,
        })])
        .unwrap(),
    );
    let err = Model::from_bytes(&bad).unwrap_err().to_string();
    assert!(err.contains("bagged share 1.5"), "{err}");
}

/// A calibration at θ for P(eventually), without debounce.
fn calibration_at(theta: f64) -> Calibration {
    Calibration {
        theta,
        debounce_frames: 1,
        horizon_steps: None,
        target_false_alarm: 0.2,
        confidence: 0.95,
        n_safe_runs: 40,
        n_false_alarms: 5,
        false_alarm_upper: 0.25,
        n_violating_runs: 10,
        n_predicted: 9,
        median_lead_s: Some(2.5),
    }
}

/// A collision property's enforcement calibration is carried through the file beside its alarm
/// calibration; a property whose unsafe predicate is not the collision flag refuses one, both when set and
/// when read from a file.
#[test]
fn an_enforcement_calibration_round_trips_and_only_a_collision_property_takes_one() {
    let mut m = small_model();
    m.set_calibration("no_collision", calibration_at(0.4))
        .unwrap();
    m.set_enforcement("no_collision", Some(calibration_at(0.15)))
        .unwrap();
    let back = Model::from_bytes(&m.to_bytes()).unwrap();
    assert_eq!(back, m);
    let p = back.property("no_collision").unwrap();
    assert!(p.is_collision());
    assert_eq!(p.enforcement(), Some(&calibration_at(0.15)));
    assert_eq!(p.calibration(), Some(&calibration_at(0.4)));
    // Both read for the risk they were made for (P(eventually)) and neither for another.
    use crate::calibrate::{enforcement_for_measure, for_measure};
    use crate::RiskMeasure;
    assert_eq!(
        enforcement_for_measure(&back, 0, &RiskMeasure::Eventually),
        Some((0.15, 1))
    );
    assert_eq!(
        for_measure(&back, 0, &RiskMeasure::Eventually),
        Some((0.4, 1))
    );
    for other in [RiskMeasure::Upper, RiskMeasure::Within(vec![0])] {
        assert_eq!(enforcement_for_measure(&back, 0, &other), None);
    }
    // Within 3 steps (horizon index 1): the enforcement made for it reads there, and not for P(eventually).
    let mut within = back.clone();
    within
        .set_enforcement(
            "no_collision",
            Some(Calibration {
                horizon_steps: Some(3),
                ..calibration_at(0.15)
            }),
        )
        .unwrap();
    assert_eq!(
        enforcement_for_measure(&within, 0, &RiskMeasure::Within(vec![1])),
        Some((0.15, 1))
    );
    assert_eq!(
        enforcement_for_measure(&within, 0, &RiskMeasure::Eventually),
        None
    );
    // Cleared again, the file is the one without.
    m.set_enforcement("no_collision", None).unwrap();
    let mut plain = small_model();
    plain
        .set_calibration("no_collision", calibration_at(0.4))
        .unwrap();
    assert_eq!(m.to_bytes(), plain.to_bytes());
    // Malformed, at a horizon without a table, or for an unknown property.
    for bad in [
        calibration_at(0.0),
        Calibration {
            horizon_steps: Some(7),
            ..calibration_at(0.2)
        },
    ] {
        assert!(m.set_enforcement("no_collision", Some(bad)).is_err());
    }
    assert!(m
        .set_enforcement("nosuch", Some(calibration_at(0.2)))
        .is_err());

    // The same chain with `speed < 0.5` as its unsafe predicate is not a collision property.
    let slow = no_stop();
    assert!(!slow.is_collision());
    let err = slow
        .clone()
        .with_enforcement(Some(calibration_at(0.2)))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a collision property"), "{err}");
    let m = model_of_no_stop(slow);
    let mut bytes = as_v13(&m);
    assert_eq!(bytes[bytes.len() - 6..], [1, 0, 1, 0, 1, 0]);
    bytes.truncate(bytes.len() - 6);
    bytes.extend(postcard::to_stdvec(&vec![Some(calibration_at(0.2))]).unwrap());
    bytes.extend_from_slice(&[1, 0, 1, 0]);
    let err = Model::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(&err, ModelError::Decode(e) if e.contains("not a collision property")),
        "{err}"
    );
}

fn tuning_at(scale: f64) -> RssTuning {
    RssTuning {
        response_scale: scale,
        target_false_alarm: 0.1,
        within_target: true,
        n_safe_runs: 40,
        n_false_alarms: 3,
        n_violating_runs: 10,
        n_predicted: 10,
        median_lead_s: Some(1.5),
    }
}

/// A collision property's RSS tuning is carried through the file; malformed tunings and a property
/// whose unsafe predicate is not the collision flag refuse one, both when set and when read from a file.
#[test]
fn an_rss_tuning_round_trips_and_only_a_collision_property_takes_one() {
    let mut m = small_model();
    m.set_rss_tuning("no_collision", Some(tuning_at(0.2)))
        .unwrap();
    let bytes = as_v13(&m);
    let back = Model::from_bytes(&bytes).unwrap();
    assert_eq!(back, m);
    assert_eq!(
        back.property("no_collision").unwrap().rss_tuning(),
        Some(&tuning_at(0.2))
    );
    // The tuning is the file's last part: read as version 10 without it, the bytes trail.
    let mut v10 = bytes.clone();
    v10[16] = 10;
    assert!(matches!(
        Model::from_bytes(&v10),
        Err(ModelError::Decode(e)) if e.contains("trailing")
    ));
    for bad in [
        tuning_at(1.5),
        tuning_at(-0.1),
        tuning_at(f64::NAN),
        RssTuning {
            n_false_alarms: 41,
            ..tuning_at(0.2)
        },
        RssTuning {
            target_false_alarm: 0.0,
            ..tuning_at(0.2)
        },
        RssTuning {
            median_lead_s: Some(f64::INFINITY),
            ..tuning_at(0.2)
        },
    ] {
        assert!(m.set_rss_tuning("no_collision", Some(bad)).is_err());
    }
    assert!(m.set_rss_tuning("nosuch", Some(tuning_at(0.2))).is_err());
    // Cleared again, the file is the plain model's.
    m.set_rss_tuning("no_collision", None).unwrap();
    assert_eq!(m.to_bytes(), small_model().to_bytes());

    // Not a collision property: refused when set, and when read from a file.
    let slow = no_stop();
    let err = slow
        .clone()
        .with_rss_tuning(Some(tuning_at(0.2)))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a collision property"), "{err}");
    let m = model_of_no_stop(slow);
    let mut bytes = as_v13(&m);
    bytes.truncate(bytes.len() - 4);
    bytes.extend(postcard::to_stdvec(&vec![Some(tuning_at(0.2))]).unwrap());
    bytes.extend_from_slice(&[1, 0]);
    let err = Model::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(&err, ModelError::Decode(e) if e.contains("not a collision property")),
        "{err}"
    );
}

/// `m`'s bytes as format 13 wrote them: without the perception latency at the end (which must be 0).
fn as_v13(m: &Model) -> Vec<u8> {
    without_last_zero(as_v14(m), 13, "a model with a perception latency")
}

/// `m` written in format 14: without the smoothing window at the end (the model must have none).
fn as_v14(m: &Model) -> Vec<u8> {
    without_last_zero(as_v15(m), 14, "a model with a smoothing window")
}

/// `m` written in format 15: without the velocity flag at the end (the model must not smooth
/// velocities).
fn as_v15(m: &Model) -> Vec<u8> {
    let mut bytes = m.to_bytes();
    assert_eq!(bytes.pop(), Some(0), "a model that smooths velocities");
    bytes[16] = 15;
    bytes
}

/// `bytes` without their last `f64`, which must be 0 (else `what`), marked as format `version`.
fn without_last_zero(mut bytes: Vec<u8>, version: u8, what: &str) -> Vec<u8> {
    let last = bytes.split_off(bytes.len() - 8);
    assert_eq!(last, 0f64.to_le_bytes(), "{what}");
    bytes[16] = version;
    bytes
}

/// `m`'s properties read as `correction` says.
fn reading(m: &Model, correction: RoadUserCorrection) -> Result<Model, ModelError> {
    Model::try_new(
        m.laws().to_vec(),
        m.properties()
            .iter()
            .map(|p| p.clone().with_road_users(correction))
            .collect(),
    )
}

/// The perception latency and then the smoothing window are the file's last parts but one, one `f64`
/// each, and the velocity flag its last byte; format 15 reads as velocities not smoothed, 14 as no
/// smoothing and 13 as neither; values out of range are refused from a file and when built, and
/// properties must agree on them.
#[test]
fn the_road_user_correction_round_trips_and_a_bad_one_is_refused() {
    let m = small_model();
    assert_eq!(m.road_users(), RoadUserCorrection::NONE);
    assert_eq!(Model::from_bytes(&as_v13(&m)).unwrap(), m);
    assert_eq!(Model::from_bytes(&as_v14(&m)).unwrap(), m);
    assert_eq!(Model::from_bytes(&as_v15(&m)).unwrap(), m);
    let correction = RoadUserCorrection {
        smoothing_s: 0.7,
        latency_s: 0.2,
        smooth_velocities: false,
    };
    let late = reading(&m, correction).unwrap();
    let with_flag = late.to_bytes();
    assert_eq!(with_flag.last(), Some(&0));
    // The same as format 15: the file without its flag.
    let mut bytes = with_flag[..with_flag.len() - 1].to_vec();
    bytes[16] = 15;
    assert_eq!(Model::from_bytes(&bytes).unwrap(), late);
    assert!(bytes.ends_with(&[0.2f64.to_le_bytes(), 0.7f64.to_le_bytes()].concat()));
    // Velocities smoothed: the flag is 1 and round-trips; another byte, or a flag without a window, is
    // refused.
    let both = RoadUserCorrection {
        smooth_velocities: true,
        ..correction
    };
    let smooth = reading(&m, both).unwrap();
    let flagged = smooth.to_bytes();
    assert_eq!(flagged.last(), Some(&1));
    assert_eq!(Model::from_bytes(&flagged).unwrap().road_users(), both);
    let mut two = flagged.clone();
    *two.last_mut().unwrap() = 2;
    assert!(matches!(
        Model::from_bytes(&two),
        Err(ModelError::Decode(_))
    ));
    let no_window = RoadUserCorrection {
        smoothing_s: 0.0,
        ..both
    };
    let err = reading(&m, no_window).unwrap_err().to_string();
    assert!(err.contains("without a smoothing window"), "{err}");
    let mut flag_alone = as_v15(&m);
    flag_alone[16] = 16;
    flag_alone.push(1);
    let err = Model::from_bytes(&flag_alone).unwrap_err().to_string();
    assert!(err.contains("without a smoothing window"), "{err}");
    let back = Model::from_bytes(&bytes).unwrap();
    assert_eq!(back, late);
    assert_eq!(back.road_users(), correction);
    assert_eq!(back.perception_latency_s(), 0.2);
    assert_eq!(back.compile().unwrap().road_users(), correction);
    // A format-14 file of a late model: its latency, no smoothing.
    let mut v14 = bytes[..bytes.len() - 8].to_vec();
    v14[16] = 14;
    let old = Model::from_bytes(&v14).unwrap();
    assert_eq!(old.road_users().latency_s, 0.2);
    assert_eq!(old.road_users().smoothing_s, 0.0);
    for (bad, what) in [
        (-0.1, "latency"),
        (1.5, "latency"),
        (f64::NAN, "latency"),
        (f64::INFINITY, "latency"),
    ] {
        let mut b = bytes[..bytes.len() - 16].to_vec();
        b.extend_from_slice(&bad.to_le_bytes());
        b.extend_from_slice(&0.7f64.to_le_bytes());
        let err = Model::from_bytes(&b).unwrap_err().to_string();
        assert!(err.contains(what), "{bad}: {err}");
        let bad_one = RoadUserCorrection {
            latency_s: bad,
            ..correction
        };
        let err = reading(&m, bad_one).unwrap_err().to_string();
        assert!(err.contains(what), "{bad}: {err}");
    }
    for bad in [-0.1, 2.5, f64::NAN, f64::INFINITY] {
        let mut b = bytes[..bytes.len() - 8].to_vec();
        b.extend_from_slice(&bad.to_le_bytes());
        let err = Model::from_bytes(&b).unwrap_err().to_string();
        assert!(err.contains("smoothing window"), "{bad}: {err}");
    }
    // Properties that disagree are refused.
    let props = vec![late.properties()[0].clone(), no_stop()];
    let err = Model::try_new(m.laws().to_vec(), props)
        .unwrap_err()
        .to_string();
    assert!(err.contains("road-user smoothing differs"), "{err}");
    // A truncated latency fails the file.
    assert!(matches!(
        Model::from_bytes(&bytes[..bytes.len() - 3]),
        Err(ModelError::Decode(_))
    ));
}
