//! `avguard calibrate --model M --target-false-alarms 10% [--select TRAIN_LOG_OR_DIR] LOG_OR_DIR...`:
//! choose each property's alarm threshold on calibration runs so that the false-alarm rate on new runs
//! stays below the target with 95 % confidence, the debounce on the `--select` runs, and store both in the
//! model (see [`crate::calibration`]).

use std::path::PathBuf;

use monitor::calibrate::placement_confidence;

use crate::calibration::{calibrate_logs, CalibrateOptions};

/// Arguments of `avguard calibrate`.
#[derive(clap::Args)]
pub struct Args {
    /// The model learned by `avguard learn`.
    #[arg(long, value_name = "MODEL")]
    model: PathBuf,
    /// The false-alarm rate to stay below, as a percentage (`10%`) or a fraction (`0.1`).
    #[arg(long, value_name = "RATE", value_parser = super::values::rate)]
    target_false_alarms: f64,
    /// Confidence of the one-sided Clopper–Pearson bound.
    #[arg(long, default_value_t = 0.95)]
    confidence: f64,
    #[command(flatten)]
    debounce: super::values::Debounce,
    /// Calibrate P(unsafe within SECONDS) instead of P(eventually unsafe).
    #[arg(long, value_name = "SECONDS")]
    horizon: Option<f64>,
    /// Runs on which to choose the debounce (repeatable; logs or folders searched for `*.h5`), disjoint
    /// from the calibration logs — the training logs will do. The choice then never sees the calibration
    /// runs, so θ is bounded there with the full confidence.
    #[arg(long, value_name = "LOG_OR_DIR")]
    select: Vec<PathBuf>,
    /// Bound the false-alarm rate within every scenario kind of the calibration logs (their `scenario`
    /// attribute), the confidence split between the kinds, instead of over all of them: the target then
    /// holds for any mix of those kinds in operation, at the price of a higher θ.
    #[arg(long)]
    per_scenario: bool,
    /// The false-alarm target of the threshold at which a collision property's interventions start
    /// (`avguard bridge`; the property's unsafe predicate is the collision flag alone), calibrated
    /// without debounce on the same runs, or `none` to have them start at the alarm's threshold. A
    /// slow-down costs a safe run a little time while a collision costs far more, so by default
    /// interventions start at a lower threshold than alarms.
    #[arg(long, value_name = "RATE|none", default_value = "20%", value_parser = parse_optional_rate)]
    enforce_target_false_alarms: OptionalRate,
    /// Where to write the calibrated model (default: overwrite MODEL).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Calibration logs (not the training logs), or folders searched for `*.h5`.
    #[arg(value_name = "LOG_OR_DIR", required = true)]
    logs: Vec<PathBuf>,
}

/// A rate, or none (a type of its own: clap reads an `Option` field as an optional argument).
#[derive(Debug, Clone, Copy, PartialEq)]
struct OptionalRate(Option<f64>);

/// `none` → no target, else as [`parse_rate`].
fn parse_optional_rate(text: &str) -> Result<OptionalRate, String> {
    if text.trim().eq_ignore_ascii_case("none") {
        Ok(OptionalRate(None))
    } else {
        super::values::rate(text).map(|r| OptionalRate(Some(r)))
    }
}

/// Runs `avguard calibrate`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut model = crate::modelfile::read(&args.model)?.model;
    let opts = CalibrateOptions {
        target_false_alarm: args.target_false_alarms,
        confidence: args.confidence,
        debounce_frames: args.debounce.frames,
        horizon_s: args.horizon,
        per_scenario: args.per_scenario,
        enforce_target_false_alarm: args.enforce_target_false_alarms.0,
    };
    crate::modelfile::check_writable(args.out.as_deref().unwrap_or(&args.model))?;
    let done = calibrate_logs(&mut model, &args.logs, &args.select, &opts)?;
    for (path, e) in &done.errors {
        eprintln!("skipped {}: {e}", path.display());
    }
    let (results, kinds, rss_tuned) = (done.results, done.kinds, done.rss_tuned);
    let out = args.out.unwrap_or(args.model);
    crate::modelfile::write(&out, &model)?;
    let chosen = match (opts.debounce_frames.len(), done.n_selection) {
        (1, _) => String::new(),
        (_, 0) => "; debounce chosen on them, confidence split between the options".into(),
        (_, n) => format!("; debounce chosen on {n} other runs"),
    };
    let within = if opts.per_scenario {
        let mut distinct = kinds.clone();
        distinct.sort();
        distinct.dedup();
        format!(
            " within each of {} scenario kinds ({}; the bound is the largest kind's)",
            distinct.len(),
            distinct.join(", ")
        )
    } else {
        String::new()
    };
    crate::outln!(
        "calibrated on {} runs (target {} false alarms{within}, {:.0} % confidence{chosen}) -> {}",
        done.n_runs,
        monitor::calibrate::percent_words(opts.target_false_alarm),
        100.0 * opts.confidence,
        out.display()
    )?;
    for r in results {
        match &r.result {
            Ok(c) => {
                crate::outln!(
                    "{}: θ = {:.4}, debounce {} frame(s); {}",
                    r.name,
                    c.theta,
                    c.debounce_frames,
                    counts_words(c)
                )?;
                let (n_options, selected) = (opts.debounce_frames.len(), done.n_selection > 0);
                // Under a split confidence, selection runs would restore the full one.
                let remedy =
                    if placement_confidence(c.confidence, n_options, selected) > c.confidence {
                        "calibrate on more runs, or choose the debounce on --select runs"
                    } else {
                        "calibrate on more runs"
                    };
                for note in r.few_runs_notes(n_options, selected, opts.per_scenario) {
                    crate::outln!("  {}: {note} ({remedy})", r.name)?;
                }
            }
            Err(e) => crate::outln!("{}: not calibrated: {e}", r.name)?,
        }
        match (&r.enforcement, opts.enforce_target_false_alarm) {
            (Some(Ok(c)), Some(target)) => crate::outln!(
                "  {} interventions: θ = {:.4} (target {:.1} % false alarms); {}",
                r.name,
                c.theta,
                100.0 * target,
                counts_words(c)
            )?,
            (Some(Err(e)), _) => {
                crate::outln!("  {} interventions: at the alarm's threshold ({e})", r.name)?
            }
            _ => {}
        }
        let tuning = model.property(&r.name).and_then(|p| p.rss_tuning());
        if let (Some(t), Some(tuned)) = (tuning, rss_tuned.iter().find(|t| t.property == r.name)) {
            crate::outln!("  {} comparator: {}", r.name, rss_tuning_words(t, tuned))?;
        }
    }
    Ok(())
}

/// RSS as tuned on the calibration runs, in words: the response times, whether they keep within the
/// target, and the counts there.
pub fn rss_tuning_words(
    t: &monitor::calibrate::RssTuning,
    tuned: &crate::rss_tuned::TunedRss,
) -> String {
    let how = if t.within_target {
        format!(
            "RSS tuned to the target: response times × {}",
            t.response_scale
        )
    } else {
        format!(
            "no response time keeps RSS within the target; its fewest false alarms at × {}",
            t.response_scale
        )
    };
    format!(
        "{how} (ego {:.2} s, other vehicles {:.2} s); false alarms {}/{} safe runs; warned of {}/{} violations{}",
        tuned.params.ego.response_time_s,
        tuned.params.other_vehicle.response_time_s,
        t.n_false_alarms,
        t.n_safe_runs,
        t.n_predicted,
        t.n_violating_runs,
        t.median_lead_s
            .map_or_else(String::new, |l| format!(", median lead {l:.1} s"))
    )
}

/// A calibration's counts on its runs: false alarms with their bound, violations warned of, median lead.
fn counts_words(c: &monitor::calibrate::Calibration) -> String {
    format!(
        "false alarms {}/{} safe runs (upper bound {:.1} %); warned of {}/{} violations{}",
        c.n_false_alarms,
        c.n_safe_runs,
        100.0 * c.false_alarm_upper,
        c.n_predicted,
        c.n_violating_runs,
        c.median_lead_s
            .map_or_else(String::new, |l| format!(", median lead {l:.1} s"))
    )
}

#[cfg(test)]
mod tests {
    use super::{parse_optional_rate, OptionalRate};
    use crate::calibration::disjoint;
    use std::path::PathBuf;

    #[test]
    fn an_optional_rate_is_none_or_a_rate() {
        assert_eq!(parse_optional_rate("None"), Ok(OptionalRate(None)));
        assert_eq!(parse_optional_rate("20%"), Ok(OptionalRate(Some(0.2))));
        assert!(parse_optional_rate("0").is_err());
    }

    /// The command line reads into the options: the interventions' target defaults to 20 %, `none` drops
    /// it.
    #[test]
    fn the_interventions_target_defaults_to_twenty_percent() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            args: super::Args,
        }
        let base = [
            "calibrate",
            "--model",
            "m.avg",
            "--target-false-alarms",
            "10%",
        ];
        let parse = |extra: &[&str]| {
            Cli::try_parse_from(base.iter().chain(extra).chain(&["cal"]))
                .unwrap()
                .args
                .enforce_target_false_alarms
        };
        assert_eq!(parse(&[]), OptionalRate(Some(0.2)));
        assert_eq!(
            parse(&["--enforce-target-false-alarms", "none"]),
            OptionalRate(None)
        );
        assert_eq!(
            parse(&["--enforce-target-false-alarms", "30%"]),
            OptionalRate(Some(0.3))
        );
    }

    #[test]
    fn a_log_cannot_both_choose_the_debounce_and_calibrate() {
        let dir = std::env::temp_dir().join(format!("avguard-disjoint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.h5"), dir.join("b.h5"));
        std::fs::write(&a, b"").unwrap();
        std::fs::write(&b, b"").unwrap();
        assert!(disjoint(std::slice::from_ref(&a), std::slice::from_ref(&b)).is_ok());
        // The same file under another spelling is caught.
        let again = dir.join(".").join("a.h5");
        let err = disjoint(&[again], &[b, a]).unwrap_err().to_string();
        assert!(err.contains("a.h5") && err.contains("--select"), "{err}");
        assert!(disjoint(&[], &[PathBuf::from("x.h5")]).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
