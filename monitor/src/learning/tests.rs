use super::*;
use laws::frame::obstacle_type;
use laws::Obstacle;

fn laws() -> Vec<LawSource> {
    vec![LawSource {
        name: "t.law".into(),
        text: "no_collision = G(collision == 0);\n\
               slow_near = G(NPCAhead(10) -> F[0,1](speed < 0.5));\n"
            .into(),
    }]
}

/// A deterministic family of runs: approach a car at a per-run speed, braking or not.
fn run(seed: u32) -> Vec<Frame> {
    let speed = 2.0 + f64::from(seed % 7);
    let brakes = seed % 3 == 0;
    let mut gap = 25.0;
    let mut v = speed;
    let mut out = Vec::new();
    for _ in 0..60 {
        if brakes && gap < 12.0 {
            v = (v - 1.0).max(0.0);
        }
        gap -= v * 0.1;
        out.push(Frame {
            speed_mps: v,
            collision: gap <= 0.0,
            obstacles: vec![Obstacle {
                id: 1,
                kind: obstacle_type::VEHICLE,
                x: laws::signals::EGO_FRONT_M + gap.max(0.0) + 2.0,
                y: 0.0,
                heading: 0.0,
                speed_mps: 0.0,
                length: 4.0,
                width: 2.0,
                priority: false,
            }],
            ..Frame::default()
        });
    }
    out
}

fn plan() -> Plan {
    let specs = [
        PropertySpec::for_law("no_collision"),
        PropertySpec::for_law("slow_near"),
    ];
    Plan::from_specs(laws(), &specs, BuildConfig::default()).unwrap()
}

#[test]
fn learning_halves_and_merging_equals_learning_everything() {
    let plan = plan();
    let ctx = SignalContext::default();
    let mut all = plan.learner(ctx).unwrap();
    let mut first = plan.learner(ctx).unwrap();
    let mut second = plan.learner(ctx).unwrap();
    for seed in 0..20 {
        all.observe_run(&run(seed)).unwrap();
        if seed < 9 {
            first.observe_run(&run(seed)).unwrap();
        } else {
            second.observe_run(&run(seed)).unwrap();
        }
    }
    let mut merged = first.into_counts();
    merge_counts(&mut merged, second.counts()).unwrap();
    assert_eq!(merged, all.counts());
    assert!(merged[0].n_transitions() > 100 && merged[0].n_runs() == 20);
    let a = plan.build(merged).unwrap();
    let b = plan.build(all.into_counts()).unwrap();
    assert_eq!(a.to_bytes(), b.to_bytes());
    // Some runs collide, some do not: risk strictly between 0 and 1 in the start state.
    let p = &a.properties()[0];
    let start = p.counts().initial_states()[0].0;
    let r = p.table().eventually(start).unwrap();
    assert!(r > 0.0 && r < 1.0, "{r}");
}

#[test]
fn plans_reject_what_they_cannot_learn() {
    assert!(Plan::new(laws(), vec![], BuildConfig::default()).is_err());
    let e = Plan::from_specs(
        laws(),
        &[PropertySpec::for_law("law99")],
        BuildConfig::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("unknown law 'law99'"), "{e}");
    let plan = plan();
    assert!(plan.build(vec![]).is_err());
    let mut c = plan.empty_counts();
    assert!(merge_counts(&mut c, &plan.empty_counts()[..1]).is_err());
}

#[test]
fn default_properties_cover_every_small_enough_law() {
    let (plan, skipped) = Plan::with_default_properties(laws(), BuildConfig::default()).unwrap();
    let names: Vec<&str> = plan.properties().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["no_collision", "slow_near"]);
    assert!(skipped.is_empty());
}
