use super::*;
use crate::counts::Counts;
use crate::domain::Domain;
use crate::property::BuildConfig;
use crate::StateId;

fn small_model() -> Model {
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
    let p = PropertyModel::build("no_collision", preds, 0, c, &cfg).unwrap();
    Model::try_new(
        vec![LawSource {
            name: "a.law".into(),
            text: "no_collision = G(collision == 0);".into(),
        }],
        vec![p],
    )
    .unwrap()
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
    let bytes = small_model().to_bytes();
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
    // The forests after the properties: one property, without a forest.
    assert_eq!(bytes[bytes.len() - 2..], [1, 0]);
    let before_forests = &bytes[..bytes.len() - 2];
    // Versions 7 (no conjunction predicates) and 8 (no forests) still read as they are; 6 does not.
    for version in [7, 8] {
        let mut old = before_forests.to_vec();
        old[16] = version;
        assert_eq!(Model::from_bytes(&old).unwrap(), small_model());
        // With forests after all, those bytes trail.
        old.extend_from_slice(&[1, 0]);
        assert!(matches!(
            Model::from_bytes(&old),
            Err(ModelError::Decode(_))
        ));
    }
    let mut six = bytes.clone();
    six[16] = 6;
    let err = Model::from_bytes(&six).unwrap_err();
    assert!(matches!(err, ModelError::Version { found: 6, .. }));
    assert!(err.to_string().contains("versions 7 to 9"), "{err}");
    // Forests for another number of properties, and none at all, in a version-9 file.
    let mut two = before_forests.to_vec();
    two.extend_from_slice(&[2, 0, 0]);
    let err = Model::from_bytes(&two).unwrap_err();
    assert!(
        err.to_string().contains("2 forests for 1 properties"),
        "{err}"
    );
    assert!(matches!(
        Model::from_bytes(before_forests),
        Err(ModelError::Decode(_))
    ));
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
