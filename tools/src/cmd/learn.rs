//! `avguard learn --laws DIR --out MODEL LOG_OR_DIR...`: learn one DTMC per monitored property from logs.
//!
//! The work is [`crate::fit`]: laws and properties from DIR, every log recorded once in parallel (a log
//! that cannot be read is reported by name and skipped; the command fails when none was learned), each
//! property's predicates kept as declared (`--abstraction fixed`) or chosen from data (`auto`, see
//! `monitor::select`), its reactive comparator rule picked, the model built and written. The summary per
//! property (predicates, selection trace, rule, PAC) is printed and stored in the model (`avguard info`
//! shows it again).

use std::path::PathBuf;

use anyhow::Context;
use monitor::estimate::LaplaceConfig;
use monitor::pac::PacConfig;
use monitor::select::{AbstractionMode, SearchConfig};
use monitor::{BuildConfig, Domain, Model};

use crate::fit::{fit, FitOptions};

/// Arguments of `avguard learn`.
#[derive(clap::Args)]
pub struct Args {
    /// Folder of `*.law` files.
    #[arg(long)]
    pub laws: PathBuf,
    /// Model file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Properties file (default: `LAWS/properties.toml` when present, else one property per law).
    #[arg(long)]
    pub properties: Option<PathBuf>,
    /// Which valid transitions receive α: `local` (single-predicate changes and the end of the run, plus
    /// every observed transition) or `all-valid` (every valid transition, Algorithm 1 as written; up to
    /// 10 predicates). `all-valid` leaks risk into states never seen to violate; see monitor::av.
    #[arg(long, value_enum, default_value_t = Smoothing::Local)]
    pub smoothing: Smoothing,
    /// PAC error bound ε.
    #[arg(long, default_value_t = 0.05)]
    pub epsilon: f64,
    /// PAC confidence parameter δ (split over the learned states).
    #[arg(long, default_value_t = 0.05)]
    pub delta: f64,
    /// Horizons of the bounded risk tables, seconds, comma-separated (each at most 100,000 frames).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,5")]
    pub horizons: Vec<f64>,
    /// Time between the logs' frames, s: every log must have it (its `frame_period_s` attribute), and the
    /// model steps at it (scored logs and the live bridge's frames then have it too). Default: the period
    /// of the first log, in path order, that reads (said on stderr).
    #[arg(long)]
    pub frame_period_s: Option<f64>,
    /// How each property's predicates are chosen: `auto` searches a pool of readable candidates (the
    /// declared predicates, every flag signal, thresholds at data quantiles on every numeric signal) by
    /// greedy forward selection scored on held-out runs, each chosen threshold also tried at finer cuts;
    /// `fixed` keeps the declared ones.
    #[arg(long, value_enum, default_value_t = Abstraction::Auto)]
    pub abstraction: Abstraction,
    /// Seed of the fold assignment (the search is deterministic for a seed).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The search's options.
    #[command(flatten)]
    pub search: SearchArgs,
    /// Log files (`.h5`) or folders holding them.
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
}

/// The options of the auto abstraction's search, which `learn` and `evaluate` share.
#[derive(clap::Args, Debug, Clone)]
pub struct SearchArgs {
    /// How late the logs report road users, s (0–1), or `auto`: estimated from the training runs'
    /// collisions — at the first frame flagged `collision` the ego's footprint should touch a road user —
    /// and used only when they clearly show road users late. The model moves every frame's road users
    /// this far ahead along their headings before computing any signal, in learning, scoring and the
    /// bridge alike (said on stderr, stored in the model, shown by `info`).
    #[arg(long, default_value_t = crate::fit::PerceptionLatency::Auto)]
    pub perception_latency: crate::fit::PerceptionLatency,
    /// Over how long each road user's position is smoothed, s (0–2), or `auto`: 0.7 s when the training
    /// runs' road users jump against their speeds — at least one in ten of their steps from one frame to
    /// the next off their speed × the time between the frames by more than half, as a perception whose
    /// age varies from frame to frame shows them (and noisy positions at a high frame rate, whose steps
    /// are short) — or when their velocities are smoothed
    /// (`--road-user-velocities`), else none. The model replaces each road user's
    /// position by the mean of its reports in the window, each moved ahead to the frame's time at its
    /// own speed and heading, before the latency and any signal, in learning, scoring and the bridge
    /// alike (said on stderr, stored in the model, shown by `info`).
    #[arg(long, default_value_t = crate::fit::RoadUserSmoothing::Auto)]
    pub road_user_smoothing: crate::fit::RoadUserSmoothing,
    /// Whether each road user's velocity (speed and heading) is smoothed with its position, over the
    /// same window and reports: `auto` when the training runs' velocities are noisy — in at least one in
    /// ten of a road user's pairs of steps from one frame to the next its velocity turns an acceleration
    /// of 2 m/s² or more around, which no vehicle drives — else not; `smoothed`; or `as-logged`. Smoothed
    /// velocities need a smoothing window (under `--road-user-smoothing auto`, 0.7 s).
    #[arg(long, value_enum, default_value_t = crate::fit::RoadUserVelocities::Auto)]
    pub road_user_velocities: crate::fit::RoadUserVelocities,
    /// Laplace pseudo-count added to each smoothed transition, or `auto`: with `--abstraction auto` the
    /// search chooses it per property from 1, 0.3 and 0.1 by the same cross-validated score as the
    /// predicates (ties keep 1); with `--abstraction fixed`, `auto` is 1.
    #[arg(long, default_value_t = AlphaArg::Auto)]
    pub alpha: AlphaArg,
    /// How an auto abstraction's smoothing splits a state's mass between violation and safe finish:
    /// `flat` (evenly, as the paper), `hierarchical` (by the risk of the state with the last chosen
    /// predicate dropped, so a rarely seen state leans on the coarser state it refines), or `auto`
    /// (chosen per property by the search's cross-validated score, with `--alpha auto` at α 1 or 0.3).
    /// The search scores its candidates under the same smoothing. `--abstraction fixed` is always flat.
    #[arg(long, value_enum, default_value_t = Prior::Flat)]
    pub prior: Prior,
    /// Most predicates per property with `--abstraction auto`, the unsafe one included (at most 12).
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..=12))]
    pub max_predicates: u32,
    /// Cross-validation folds of the search (runs, never frames, are split). Held out, 3 and 10 folds
    /// both warned worse than 5 (docs/MEASUREMENTS.md); fewer folds cost less.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(2..=20))]
    pub folds: u32,
    /// Chains per property with `--abstraction auto`: above 1, an ensemble — further searches, each
    /// one's chain kept, and the property's risk is their mean. With `--forest-choice nested` (and a
    /// forest) the further chains are the searches that choice runs without each fold, each chain's
    /// predicates chosen on the runs outside one fold, at no further search; otherwise (and beyond the
    /// folds) the search runs again on every run under other fold assignments, each one more search.
    /// At most 16.
    #[arg(long, default_value_t = DEFAULT_ENSEMBLE, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub ensemble: u32,
    /// With `--abstraction auto`, whether each property's risk may mix in the frame share, the share of
    /// a state's training frames that belong to runs that went on to violate: `auto` lets the search's
    /// cross-validated score choose its weight (0, ¼, ½ or ¾; 0 is the chain's P(F unsafe) alone), `off`
    /// keeps the chain's risk alone.
    #[arg(long, value_enum, default_value_t = FrameShareArg::Auto)]
    pub frame_share: FrameShareArg,
    /// With `--abstraction auto`, conjunction predicates: each step of the search also scores its
    /// this-many best candidates joined with every predicate chosen so far and with each other (`a & b`,
    /// either literal possibly negated) as one predicate, which takes the step when it scores at least
    /// 0.01 higher than the step's best single candidate; 0
    /// (the default) keeps every predicate a single atom. Conjunctions read as words and can warn
    /// earlier for some laws, but on held-out runs they did not dominate more comparators
    /// (docs/MEASUREMENTS.md).
    #[arg(long, default_value_t = DEFAULT_CONJUNCTIONS, value_parser = clap::value_parser!(u32).range(0..=64))]
    pub conjunctions: u32,
    /// With `--abstraction auto`, trees of each searched property's forest: small decision trees over
    /// the same candidates, grown on seeded subsets of the runs to foresee a violation within 3 s, whose
    /// mean leaf share the risk mixes in with a weight (0, ¼, ½ or ¾) chosen on the search's folds; a
    /// property that warns no better with it keeps none. 0 grows none (at most 64).
    #[arg(long, default_value_t = DEFAULT_FOREST, value_parser = clap::value_parser!(u32).range(0..=64))]
    pub forest: u32,
    /// What the forest's weight is chosen against on each fold: `nested` (the default) a chain whose
    /// predicates the search chose again on the other folds' runs alone, so that chain and forest are
    /// both scored on runs they never saw (one more search per fold, whose chains are also the
    /// ensemble's further ones); `direct` the first chain, whose predicates were chosen to score best on those very folds,
    /// so its fold score is flattered and the choice leans to no forest (docs/MEASUREMENTS.md).
    #[arg(long, value_enum, default_value_t = ForestChoice::Nested)]
    pub forest_choice: ForestChoice,
    /// How each forest's trees are grown: `bagged` (the default) `--forest` trees on seeded subsets of
    /// the runs, their leaf shares averaged; `boosted` 100 trees by gradient boosting, each fitted to
    /// what the ones before it left unexplained; `either` grows both on the folds and keeps the boosted
    /// trees where their mix scores higher there and warns of no fewer held-out violations at the 5 %
    /// budget (docs/MEASUREMENTS.md, session 34); `both` grows both, chooses each one's weight on the
    /// folds and keeps both, the risk the mean of the risks with each alone (session 35).
    #[arg(long, value_enum, default_value_t = ForestKindArg::Bagged)]
    pub forest_kind: ForestKindArg,
}

/// `--forest-kind` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ForestKindArg {
    /// Bagged trees.
    Bagged,
    /// Boosted trees.
    Boosted,
    /// Whichever the folds prefer.
    Either,
    /// Both, each at the weight the folds choose for it, the risks averaged.
    Both,
}

impl SearchArgs {
    /// How these options read the logs' road users.
    ///
    /// # Errors
    /// Options that contradict each other ([`crate::fit::RoadUserOptions::new`]).
    pub fn road_users(&self) -> anyhow::Result<crate::fit::RoadUserOptions> {
        crate::fit::RoadUserOptions::new(
            self.perception_latency,
            self.road_user_smoothing,
            self.road_user_velocities,
        )
        .map_err(anyhow::Error::msg)
    }

    /// The search these options ask for, its folds assigned with `seed`.
    pub fn config(&self, seed: u64) -> SearchConfig {
        let search = SearchConfig {
            max_predicates: self.max_predicates as usize,
            folds: self.folds as usize,
            seed,
            chains: self.ensemble as usize,
            conjunction_partners: self.conjunctions as usize,
            forest_trees: self.forest as usize,
            forest_kind: match self.forest_kind {
                ForestKindArg::Bagged => monitor::select::forest::ForestKind::Bagged,
                ForestKindArg::Boosted => monitor::select::forest::ForestKind::Boosted,
                ForestKindArg::Either => monitor::select::forest::ForestKind::Either,
                ForestKindArg::Both => monitor::select::forest::ForestKind::Both,
            },
            ..SearchConfig::default()
        };
        self.forest_choice.search(
            self.frame_share
                .search(self.prior.search(self.alpha.search(search))),
        )
    }
}

/// Default `--ensemble` of `learn` and `evaluate`: chains per property.
pub const DEFAULT_ENSEMBLE: u32 = 3;

/// Default `--conjunctions` of `learn` and `evaluate`: none (single-atom predicates; on held-out runs
/// conjunctions did not earn their place, see docs/MEASUREMENTS.md).
pub const DEFAULT_CONJUNCTIONS: u32 = 0;

/// Default `--forest` of `learn` and `evaluate`: trees per property's forest.
pub const DEFAULT_FOREST: u32 = 8;

/// The search `avguard learn` runs without options (`--alpha auto`, `--prior flat`, `--frame-share
/// auto`, `--ensemble 3`, no `--conjunctions`, `--forest 8`, `--forest-choice nested`, the search's
/// default folds, seed and predicate bound): what the demo learns with too.
pub fn default_search() -> SearchConfig {
    ForestChoice::Nested.search(FrameShareArg::Auto.search(Prior::Flat.search(
        AlphaArg::Auto.search(SearchConfig {
            chains: DEFAULT_ENSEMBLE as usize,
            conjunction_partners: DEFAULT_CONJUNCTIONS as usize,
            forest_trees: DEFAULT_FOREST as usize,
            ..SearchConfig::default()
        }),
    )))
}

/// `--alpha`: a pseudo-count, or `auto` (chosen by the search).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AlphaArg {
    /// Chosen per property by the auto abstraction's search; 1 otherwise.
    Auto,
    /// This pseudo-count.
    Value(f64),
}

impl AlphaArg {
    /// The pseudo-count of a model whose α is not chosen: the value, or 1 for `auto`.
    pub fn value(self) -> f64 {
        match self {
            AlphaArg::Auto => 1.0,
            AlphaArg::Value(a) => a,
        }
    }

    /// `search` under this α: the value, or, for `auto`, the choice among
    /// [`monitor::select::search::ALPHA_CHOICES`].
    pub fn search(self, search: SearchConfig) -> SearchConfig {
        SearchConfig {
            alpha: self.value(),
            choose_alpha: self == AlphaArg::Auto,
            ..search
        }
    }
}

impl std::str::FromStr for AlphaArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        crate::fit::parse_auto_or(
            s,
            // Far larger pseudo-counts overflow the smoothed sums (1e308 did, late, without naming
            // the option) and mean nothing a thousand times smaller would not.
            |a| (0.0..=1e6).contains(&a),
            "a pseudo-count from 0 to 1e6",
        )
        .map(|a| a.map_or(AlphaArg::Auto, AlphaArg::Value))
    }
}

impl std::fmt::Display for AlphaArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AlphaArg::Auto => crate::fit::write_auto_or(f, None),
            AlphaArg::Value(a) => crate::fit::write_auto_or(f, Some(*a)),
        }
    }
}

/// `--abstraction` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Abstraction {
    /// The declared predicates (law atoms plus properties.toml).
    Fixed,
    /// Predicates chosen from data.
    Auto,
}

impl From<Abstraction> for AbstractionMode {
    fn from(a: Abstraction) -> AbstractionMode {
        match a {
            Abstraction::Fixed => AbstractionMode::Fixed,
            Abstraction::Auto => AbstractionMode::Auto,
        }
    }
}

/// `--frame-share` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FrameShareArg {
    /// Weight chosen per property by the search's cross-validated score.
    Auto,
    /// The chain's risk alone.
    Off,
}

impl FrameShareArg {
    /// `search` with this choice.
    pub fn search(self, search: SearchConfig) -> SearchConfig {
        SearchConfig {
            choose_share: self == FrameShareArg::Auto,
            ..search
        }
    }
}

/// `--forest-choice` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ForestChoice {
    /// Against chains searched without the fold they are scored on.
    Nested,
    /// Against the first chain, searched on every run.
    Direct,
}

impl ForestChoice {
    /// `search` with this choice.
    pub fn search(self, search: SearchConfig) -> SearchConfig {
        SearchConfig {
            forest_nested: self == ForestChoice::Nested,
            ..search
        }
    }
}

/// `--prior` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Prior {
    /// Evenly between violation and safe finish.
    Flat,
    /// By the parent state's risk.
    Hierarchical,
    /// Chosen per property by the search, like α.
    Auto,
}

impl Prior {
    /// `search` with this prior.
    pub fn search(self, search: SearchConfig) -> SearchConfig {
        SearchConfig {
            hierarchical: self == Prior::Hierarchical,
            choose_prior: self == Prior::Auto,
            ..search
        }
    }
}

/// `--smoothing` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Smoothing {
    /// Single-predicate changes, the end of the run, and observed transitions.
    Local,
    /// Every valid transition.
    AllValid,
}

/// The fit that `avguard learn` runs for `args` on logs at `frame_period_s` (`--frame-period-s`, else
/// [`crate::fit::frame_period`] of the logs; also what the Python package's learning uses).
pub fn fit_options(args: &Args, frame_period_s: f64) -> anyhow::Result<FitOptions> {
    let defaults = BuildConfig::at_frame_period(frame_period_s).context("--frame-period-s")?;
    let road_users = args.search.road_users()?;
    let config = BuildConfig {
        laplace: LaplaceConfig {
            alpha: args.search.alpha.value(),
        },
        pac: PacConfig {
            epsilon: args.epsilon,
            delta: args.delta,
        },
        horizons_steps: BuildConfig::steps_from_seconds(&args.horizons, frame_period_s)?,
        smoothing: match args.smoothing {
            Smoothing::Local => monitor::av::SmoothingScope::Local,
            Smoothing::AllValid => monitor::av::SmoothingScope::AllValid,
        },
        // What is given is the plan's; `auto` starts as logged (`fit::record_for_fit` decides).
        road_users: road_users.first(),
        ..defaults
    };
    Ok(FitOptions {
        build: config,
        mode: args.abstraction.into(),
        search: args.search.config(args.seed),
        road_users,
    })
}

/// Runs `avguard learn`.
pub fn run(args: Args) -> anyhow::Result<()> {
    crate::modelfile::check_writable(&args.out)?;
    let logs = crate::batch::expand_logs(&args.logs)?;
    let (period, source) = crate::fit::frame_period(args.frame_period_s, &logs);
    if let Some(words) = crate::fit::period_words(period, &source) {
        eprintln!("{words}");
    }
    let opts = fit_options(&args, period)?;
    let fitted = fit(&args.laws, args.properties.as_deref(), &logs, &opts)?;
    if !fitted.left_out.is_empty() {
        crate::outln!(
            "left out (more than {} predicates): {}",
            monitor::spec::MAX_PROPERTY_PREDICATES,
            fitted.left_out.join(", ")
        )?;
    }
    for (path, e) in &fitted.errors {
        eprintln!("skipped {}: {e}", path.display());
    }
    let model = fitted.model;
    for words in fitted.road_users.words() {
        eprintln!("{words}");
    }
    let reports = fitted.reports;
    crate::modelfile::write(&args.out, &model)?;
    crate::outln!(
        "learned {} properties from {} of {} logs -> {}",
        model.properties().len(),
        fitted.n_learned,
        logs.len(),
        args.out.display()
    )?;
    print_summary(&model)?;
    for (p, r) in model.properties().iter().zip(&reports) {
        let weight = p.forest().map_or(0.0, |f| f.weight());
        if let Some(line) = forest_choice_words(&r.name, weight, &r.forest) {
            crate::outln!("{line}")?;
        }
    }
    Ok(())
}

/// How property `name`'s forest weight `weight` (0: none stored) was chosen, in words: every weight's
/// cross-validated score (one per weight of `FOREST_WEIGHTS`) and the chosen weight's margin over the
/// best of the others (a small margin says the choice is close to a toss), then, unless the trees are
/// bagged alone, their kind and, when both kinds were grown, the other kind's best score; `None` when
/// no forest was grown (no scores) or `weight` is not one of them. A forest of both kinds gives each
/// kind's weight and scores (its own weight is their mean).
pub fn forest_choice_words(
    name: &str,
    weight: f64,
    choice: &monitor::select::forest::ForestChoice,
) -> Option<String> {
    use monitor::select::forest::{best_weight, ForestKind};
    if choice.kind == ForestKind::Both {
        let (bagged, boosted) = (&choice.scores, &choice.boosted_scores);
        let (wb, wg) = (best_weight(bagged), best_weight(boosted));
        return Some(format!(
            "{name}: forest weight {weight} (bagged trees at weight {wb}, {}; boosted trees at weight {wg}, {})",
            scores_words(wb, bagged)?,
            scores_words(wg, boosted)?
        ));
    }
    // Bagged trees alone read as before boosting was an option; the rest is appended.
    let kind = match (choice.kind, choice.other_best) {
        (ForestKind::Boosted, None) => "; boosted trees".to_string(),
        (ForestKind::Boosted, Some(b)) => format!("; boosted trees, bagged trees' best {b:.4}"),
        (_, Some(b)) if choice.boosted_vetoed => format!(
            "; bagged trees, boosted trees' best {b:.4}, not kept: fewer held-out violations warned of at the strictest budget"
        ),
        (_, Some(b)) => format!("; bagged trees, boosted trees' best {b:.4}"),
        (_, None) => String::new(),
    };
    Some(format!(
        "{name}: forest weight {weight} ({}{kind})",
        scores_words(weight, &choice.scores)?
    ))
}

/// `fold scores of weights 0 / 0.25 / 0.5 / 0.75: S0 / S1 / S2 / S3; margin over the next M` for the
/// weight `weight` chosen by `scores` (one per weight of `FOREST_WEIGHTS`): its margin over the best of
/// the others; `None` for other scores or a weight not among them.
fn scores_words(weight: f64, scores: &[f64]) -> Option<String> {
    use monitor::select::forest::FOREST_WEIGHTS;
    if scores.len() != FOREST_WEIGHTS.len() {
        return None;
    }
    let best = FOREST_WEIGHTS.iter().position(|&w| w == weight)?;
    let runner_up = (0..scores.len())
        .filter(|&i| i != best)
        .map(|i| scores[i])
        .fold(f64::NEG_INFINITY, f64::max);
    let list =
        |f: &dyn Fn(usize) -> String| (0..scores.len()).map(f).collect::<Vec<_>>().join(" / ");
    Some(format!(
        "fold scores of weights {}: {}; margin over the next {:.5}",
        list(&|i| FOREST_WEIGHTS[i].to_string()),
        list(&|i| format!("{:.4}", scores[i])),
        scores[best] - runner_up
    ))
}

fn print_summary(model: &Model) -> anyhow::Result<()> {
    for p in model.properties() {
        let pac = p.pac();
        let domain = p.domain()?;
        crate::outln!(
            "{}: {} predicates, {} states, {} runs, {} transitions; PAC (epsilon {}, delta {}): {} / {} \
             states meet the bound ({} visited)",
            p.name(),
            p.predicates().len(),
            p.n_states(),
            p.counts().n_runs(),
            p.counts().n_transitions(),
            pac.config().epsilon,
            pac.config().delta,
            pac.met(),
            pac.total(),
            pac.visited()
        )?;
        if let Some(sel) = p.selection() {
            crate::outln!(
                "  abstraction {}: cross-validated score {:.3} (fixed predicates: {:.3}; {} folds, \
                 {} candidates; Laplace α {}, {} prior)",
                sel.mode.as_str(),
                sel.steps.last().map_or(0.0, |s| s.score),
                sel.fixed_score,
                sel.folds,
                sel.pool_size,
                p.config().laplace.alpha,
                p.config().prior.as_str()
            )?;
            if sel.mode == monitor::select::AbstractionMode::Auto {
                let trace: Vec<String> = sel
                    .steps
                    .iter()
                    .skip(1)
                    .map(|s| format!("{} ({:.3})", s.predicate, s.score))
                    .collect();
                crate::outln!("  chosen: {}", trace.join(", "))?;
            }
        }
        let all_runs = p.selection().map_or(0, |s| s.n_runs);
        for (k, m) in p.members().iter().enumerate() {
            crate::outln!(
                "  chain {} (fold seed {}, searched on {} of {all_runs} runs): cross-validated score {:.3}; {}",
                k + 2,
                m.selection().map_or(0, |s| s.seed),
                m.selection().map_or(0, |s| s.n_runs),
                m.selection()
                    .and_then(|s| s.steps.last())
                    .map_or(0.0, |s| s.score),
                m.predicates().get(1..).unwrap_or_default().join(", ")
            )?;
        }
        if let Some(rule) = p.reactive_rule() {
            crate::outln!(
                "  reactive rule (training runs): {} — warned {}/{} violations, alarmed in {}/{} safe runs",
                rule.text(),
                rule.n_predicted,
                rule.n_violating,
                rule.n_false_alarms,
                rule.n_safe
            )?;
        }
        for (s, n, required) in pac.worst(3) {
            if domain.is_valid_state(s) {
                crate::outln!(
                    "  worst: {n} of {} visits needed in [{}]",
                    required.ceil(),
                    domain.decode(s)
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// `avguard learn`'s arguments alone, as the binary parses them.
    #[derive(Parser)]
    struct Learn {
        #[command(flatten)]
        args: Args,
    }

    /// The printed weight is the stored one (here the first best score's: ties keep the lower weight,
    /// as the search does), with its margin over the best of the others.
    #[test]
    fn the_forest_choice_reads_as_the_search_made_it() {
        use monitor::select::forest::{ForestChoice, ForestKind};
        let of = |kind, scores: &[f64], other_best| ForestChoice {
            kind,
            scores: scores.to_vec(),
            other_best,
            ..ForestChoice::default()
        };
        assert_eq!(
            forest_choice_words(
                "p",
                0.25,
                &of(ForestKind::Bagged, &[0.5, 0.61234, 0.61234, 0.1], None)
            )
            .unwrap(),
            "p: forest weight 0.25 (fold scores of weights 0 / 0.25 / 0.5 / 0.75: \
             0.5000 / 0.6123 / 0.6123 / 0.1000; margin over the next 0.00000)"
        );
        let words = forest_choice_words(
            "q",
            0.0,
            &of(ForestKind::Bagged, &[0.63, 0.6, 0.62998, 0.2], None),
        )
        .unwrap();
        assert!(
            words.starts_with("q: forest weight 0 (") && words.ends_with("next 0.00002)"),
            "{words}"
        );
        let words = forest_choice_words(
            "s",
            0.5,
            &of(ForestKind::Boosted, &[0.6, 0.62, 0.65, 0.64], Some(0.631)),
        )
        .unwrap();
        assert!(
            words.ends_with("next 0.01000; boosted trees, bagged trees' best 0.6310)"),
            "{words}"
        );
        let words = forest_choice_words(
            "t",
            0.0,
            &of(ForestKind::Bagged, &[0.6, 0.5, 0.5, 0.5], Some(0.59)),
        )
        .unwrap();
        assert!(
            words.ends_with("next 0.10000; bagged trees, boosted trees' best 0.5900)"),
            "{words}"
        );
        let vetoed = ForestChoice {
            boosted_vetoed: true,
            ..of(ForestKind::Bagged, &[0.6, 0.5, 0.5, 0.5], Some(0.65))
        };
        let words = forest_choice_words("u", 0.0, &vetoed).unwrap();
        assert!(
            words.ends_with(
                "boosted trees' best 0.6500, not kept: fewer held-out violations warned of at the strictest budget)"
            ),
            "{words}"
        );
        assert_eq!(
            forest_choice_words("r", 0.0, &of(ForestKind::Bagged, &[], None)),
            None
        );
        // Both kinds: each kind's weight is its scores' first best, the forest's their mean.
        let both = ForestChoice {
            boosted_scores: vec![0.6, 0.62, 0.65, 0.65],
            ..of(ForestKind::Both, &[0.6, 0.61, 0.5, 0.5], None)
        };
        assert_eq!(
            forest_choice_words("v", 0.375, &both).unwrap(),
            "v: forest weight 0.375 (bagged trees at weight 0.25, fold scores of weights \
             0 / 0.25 / 0.5 / 0.75: 0.6000 / 0.6100 / 0.5000 / 0.5000; margin over the next 0.01000; \
             boosted trees at weight 0.5, fold scores of weights 0 / 0.25 / 0.5 / 0.75: \
             0.6000 / 0.6200 / 0.6500 / 0.6500; margin over the next 0.00000)"
        );
        let none = ForestChoice {
            boosted_scores: Vec::new(),
            ..both
        };
        assert_eq!(forest_choice_words("w", 0.375, &none), None);
    }

    /// `--alpha` takes `auto` or a pseudo-count from 0 to 1e6, and refuses by name what would overflow
    /// the smoothed sums late (1e308 did).
    #[test]
    fn alpha_is_a_bounded_pseudo_count() {
        let parse = |v: &str| {
            let alpha = format!("--alpha={v}");
            Learn::try_parse_from(["learn", "--laws", "l", "--out", "m", alpha.as_str(), "x.h5"])
        };
        assert_eq!(parse("auto").unwrap().args.search.alpha, AlphaArg::Auto);
        assert_eq!(parse("0").unwrap().args.search.alpha, AlphaArg::Value(0.0));
        assert_eq!(
            parse("1e6").unwrap().args.search.alpha,
            AlphaArg::Value(1e6)
        );
        for bad in ["1e308", "1000001", "-1", "NaN", "inf"] {
            let Err(err) = parse(bad) else {
                panic!("--alpha {bad} accepted")
            };
            assert!(
                err.to_string().contains("a pseudo-count from 0 to 1e6"),
                "{bad}: {err}"
            );
        }
    }

    /// The search `learn` runs without options is [`default_search`] (which the demo learns with too),
    /// and `--forest-choice direct` changes only the forest's choice: the two cannot drift apart (the
    /// demo once missed an option `learn` had).
    #[test]
    fn the_default_search_is_learn_s_without_options() {
        let learn = Learn::try_parse_from(["learn", "--laws", "l", "--out", "m", "x.h5"]).unwrap();
        let options = fit_options(&learn.args, 0.1).unwrap();
        assert_eq!(options.search, default_search());
        assert!(options.search.choose_share && options.search.choose_alpha);
        assert!(options.search.forest_nested);
        let direct = Learn::try_parse_from([
            "learn",
            "--laws",
            "l",
            "--out",
            "m",
            "--forest-choice",
            "direct",
            "x.h5",
        ])
        .unwrap();
        let direct = fit_options(&direct.args, 0.1).unwrap().search;
        assert_eq!(
            direct,
            SearchConfig {
                forest_nested: false,
                ..default_search()
            }
        );
    }
}
