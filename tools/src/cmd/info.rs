//! `avguard info [--json] MODEL`: list a model's properties with predicates, state count and PAC summary.

use std::fmt::Write as _;
use std::path::PathBuf;

use monitor::{Model, PropertyModel};

/// Arguments of `avguard info`.
#[derive(clap::Args)]
pub struct Args {
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// The model file (written by `avguard learn`).
    model: PathBuf,
}

/// Runs `avguard info`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let model = crate::modelfile::read(&args.model)?.model;
    let text = if args.json {
        json(&model)
    } else {
        text(&model)
    };
    crate::outln!("{text}")?;
    Ok(())
}

/// A JSON string literal (quotes, backslashes and control characters escaped).
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn property_json(p: &PropertyModel) -> String {
    let pac = p.pac();
    let preds: Vec<String> = p.predicates().iter().map(|s| quote(s)).collect();
    let worst: Vec<String> = pac
        .worst(5)
        .iter()
        .map(|(s, n, r)| format!("{{\"state\":{s},\"n\":{n},\"required\":{}}}", r.ceil()))
        .collect();
    format!(
        "{{\"name\":{},\"predicates\":[{}],\"unsafe\":{},\"states\":{},\"transitions\":{},\"runs\":{},\
         \"pac\":{{\"met\":{},\"total\":{},\"visited\":{},\"epsilon\":{},\"delta\":{},\"worst\":[{}]}},\
         \"smoothing\":{{\"alpha\":{},\"scope\":{},\"prior\":{}}},\"frame_share_weight\":{},\"forest\":{},\"horizons_steps\":[{}],\"selection\":{},\"reactive_rule\":{},\"calibration\":{},\"enforcement\":{},\"rss_tuning\":{},\"members\":[{}]}}",
        quote(p.name()),
        preds.join(","),
        quote(&p.predicates()[p.unsafe_bit()]),
        p.n_states(),
        p.dtmc().n_transitions(),
        p.counts().n_runs(),
        pac.met(),
        pac.total(),
        pac.visited(),
        pac.config().epsilon,
        pac.config().delta,
        worst.join(","),
        serde_json::json!(p.config().laplace.alpha),
        quote(p.config().smoothing.as_str()),
        quote(p.config().prior.as_str()),
        serde_json::json!(p.frame_share().map_or(0.0, |f| f.weight())),
        p.forest().map_or_else(
            || "null".to_owned(),
            |f| serde_json::json!({
                "weight": f.weight(),
                "kind": match (f.boost_base(), f.bagged_part()) {
                    (None, _) => "bagged",
                    (Some(_), None) => "boosted",
                    (Some(_), Some(_)) => "both",
                },
                "boost_base": f.boost_base(),
                "bagged_trees": f.bagged_part().map(|b| b.trees),
                "bagged_share": f.bagged_part().map(|b| b.share),
                "trees": f.trees().len(),
                "horizon_steps": f.horizon_steps(),
                "predicates": f.predicates(),
            })
            .to_string()
        ),
        p.table()
            .horizons_steps()
            .iter()
            .map(|h| h.to_string())
            .collect::<Vec<_>>()
            .join(","),
        to_json(p.selection()),
        to_json(p.reactive_rule()),
        to_json(p.calibration()),
        to_json(p.enforcement()),
        to_json(p.rss_tuning()),
        p.members()
            .iter()
            .map(property_json)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// An optional stored record as JSON (`null` when absent).
fn to_json<T: serde::Serialize>(value: Option<&T>) -> String {
    value
        .and_then(|v| serde_json::to_string(v).ok())
        .unwrap_or_else(|| "null".to_owned())
}

/// What `avguard info --json` prints for `model` (also the Python package's `Model.info()`).
pub fn json(model: &Model) -> String {
    let props: Vec<String> = model.properties().iter().map(property_json).collect();
    format!(
        "{{\"properties\":[{}],\"frame_period_s\":{},\"perception_latency_s\":{},\
         \"road_user_smoothing_s\":{},\"road_user_velocities_smoothed\":{}}}",
        props.join(","),
        serde_json::json!(model.frame_period_s()),
        serde_json::json!(model.road_users().latency_s),
        serde_json::json!(model.road_users().smoothing_s),
        serde_json::json!(model.road_users().smooth_velocities)
    )
}

/// A calibration's risk measure and its false-alarm bound on the calibration runs.
fn bound_words(c: &monitor::calibrate::Calibration) -> String {
    format!(
        "{}; false alarms {}/{} safe calibration runs, {:.0} % confidence upper bound {:.1} % (target {:.1} %)",
        c.horizon_steps
            .map_or_else(|| "P(eventually)".to_owned(), |h| format!("P(within {h} steps)")),
        c.n_false_alarms,
        c.n_safe_runs,
        100.0 * c.confidence,
        100.0 * c.false_alarm_upper,
        100.0 * c.target_false_alarm
    )
}

fn text(model: &Model) -> String {
    let mut out = String::new();
    for p in model.properties() {
        let pac = p.pac();
        let _ = writeln!(
            out,
            "{}: {} states, {} transitions, {} runs; unsafe = {}",
            p.name(),
            p.n_states(),
            p.dtmc().n_transitions(),
            p.counts().n_runs(),
            p.predicates()[p.unsafe_bit()]
        );
        for (i, pred) in p.predicates().iter().enumerate() {
            let _ = writeln!(out, "  bit {i}: {pred}");
        }
        let _ = writeln!(
            out,
            "  PAC (epsilon {}, delta {}): {} / {} states meet the bound ({} visited)",
            pac.config().epsilon,
            pac.config().delta,
            pac.met(),
            pac.total(),
            pac.visited()
        );
        for (s, n, r) in pac.worst(5) {
            let _ = writeln!(out, "    state {s}: {n} of {} required visits", r.ceil());
        }
        let _ = writeln!(
            out,
            "  Laplace smoothing: alpha {}, {} scope, {} prior",
            p.config().laplace.alpha,
            p.config().smoothing.as_str(),
            p.config().prior.as_str()
        );
        if let Some(share) = p.frame_share() {
            let w = share.weight();
            let _ = writeln!(
                out,
                "  risk: {} x P(F unsafe) + {w} x frame share (the share of a state's training frames in runs that went on to violate; weight chosen by the cross-validated score)",
                1.0 - w
            );
        }
        if let Some(f) = p.forest() {
            let w = f.weight();
            let (trees, value) = match (f.boost_base(), f.bagged_part()) {
                (None, _) => (
                    "bagged trees".to_string(),
                    "each leaf the share of its training frames followed by a violation".to_string(),
                ),
                (Some(b), None) => (
                    "boosted trees".to_string(),
                    format!(
                        "its value the logistic of {b:.3} plus the leaves' log-odds steps, the chance of a violation"
                    ),
                ),
                (Some(b), Some(part)) => (
                    format!(
                        "trees, {} bagged and {} boosted,",
                        part.trees,
                        f.trees().len() - part.trees as usize
                    ),
                    format!(
                        "its value {:.3} x the bagged trees' mean leaf share + {:.3} x the logistic of {b:.3} plus the boosted leaves' log-odds steps, the chance of a violation",
                        part.share,
                        1.0 - part.share
                    ),
                ),
            };
            let _ = writeln!(
                out,
                "  forest: the risk above mixed as {} x risk + {w} x forest ({} {trees} over {} split predicates, {value} within {} steps; weight chosen by the cross-validated score)",
                1.0 - w,
                f.trees().len(),
                f.predicates().len(),
                f.horizon_steps()
            );
        }
        if let Some(sel) = p.selection() {
            let _ = writeln!(
                out,
                "  abstraction: {} ({} of {} training runs violating; {} candidates, {}-fold score by run, seed {})",
                sel.mode.as_str(),
                sel.n_violating,
                sel.n_runs,
                sel.pool_size,
                sel.folds,
                sel.seed
            );
            let _ = writeln!(
                out,
                "    fixed predicates score {:.3}; selection trace (score after each step):",
                sel.fixed_score
            );
            for step in &sel.steps {
                let _ = writeln!(out, "      {:.3}  {}", step.score, step.predicate);
            }
        }
        if !p.members().is_empty() {
            let _ = writeln!(
                out,
                "  ensemble: the risk is the mean of {} chains, this one and:",
                p.members().len() + 1
            );
            let all_runs = p.selection().map_or(0, |s| s.n_runs);
            for (k, m) in p.members().iter().enumerate() {
                let _ = writeln!(
                    out,
                    "    chain {}: {} states, alpha {}, {} prior, fold seed {}, searched on {} of {all_runs} runs, score {:.3}; predicates {}",
                    k + 2,
                    m.n_states(),
                    m.config().laplace.alpha,
                    m.config().prior.as_str(),
                    m.selection().map_or_else(|| "-".to_owned(), |s| s.seed.to_string()),
                    m.selection().map_or(0, |s| s.n_runs),
                    m.selection()
                        .and_then(|s| s.steps.last())
                        .map_or(f64::NAN, |s| s.score),
                    m.predicates().join(", ")
                );
            }
        }
        if let Some(rule) = p.reactive_rule() {
            let _ = writeln!(
                out,
                "  reactive rule: {} (training runs: warned {}/{} violations, alarmed in {}/{} safe runs)",
                rule.text(),
                rule.n_predicted,
                rule.n_violating,
                rule.n_false_alarms,
                rule.n_safe
            );
        }
        if let Some(c) = p.calibration() {
            let _ = writeln!(
                out,
                "  calibrated: θ = {:.4}, debounce {} frame(s), {}",
                c.theta,
                c.debounce_frames,
                bound_words(c)
            );
        }
        if let Some(c) = p.enforcement() {
            let _ = writeln!(
                out,
                "  interventions (bridge): θ = {:.4}, {}",
                c.theta,
                bound_words(c)
            );
        }
        if let Some(t) = p.rss_tuning() {
            let _ = writeln!(
                out,
                "  comparator RSS (score): CARLA's response times × {} ({} the {:.1} % target on the calibration runs: false alarms {}/{} safe runs, warned of {}/{} violations)",
                t.response_scale,
                if t.within_target { "within" } else { "the fewest false alarms, above" },
                100.0 * t.target_false_alarm,
                t.n_false_alarms,
                t.n_safe_runs,
                t.n_predicted,
                t.n_violating_runs
            );
        }
    }
    let _ = writeln!(
        out,
        "frame period: {} s (the logs it learns from or scores, and the bridge's frames, have it)",
        model.frame_period_s()
    );
    let road_users = model.road_users();
    if road_users.smoothing_s > 0.0 {
        let (too, velocities) = if road_users.smooth_velocities {
            (", velocities too", ", and its velocity the mean of theirs")
        } else {
            ("", "")
        };
        let _ = writeln!(
            out,
            "road-user smoothing: {} s{too} (every road user's position is the mean of its reports of the \
             last {} s, each moved ahead to the frame's time{velocities}, before any signal is computed)",
            road_users.smoothing_s, road_users.smoothing_s
        );
    }
    if model.perception_latency_s() > 0.0 {
        let _ = writeln!(
            out,
            "perception latency: {} s (every frame's road users are moved this far ahead along their \
             headings before any signal is computed: the logs it was learned from report them late)",
            model.perception_latency_s()
        );
    }
    out.trim_end().to_string()
}
