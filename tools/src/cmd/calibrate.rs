//! `avguard calibrate --model M --target-false-alarms 10% LOG_OR_DIR...`: choose each property's alarm
//! threshold (and debounce) on calibration runs so that the false-alarm rate on new runs stays below the
//! target with 95 % confidence, and store it in the model (see [`crate::calibration`]).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context};
use monitor::RiskMeasure;

use crate::calibration::{calibrate_model, series_of_logs, CalibrateOptions};

/// Arguments of `avguard calibrate`.
#[derive(clap::Args)]
pub struct Args {
    /// The model learned by `avguard learn`.
    #[arg(long, value_name = "MODEL")]
    model: PathBuf,
    /// The false-alarm rate to stay below, as a percentage (`10%`) or a fraction (`0.1`).
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    target_false_alarms: f64,
    /// Confidence of the one-sided Clopper–Pearson bound.
    #[arg(long, default_value_t = 0.95)]
    confidence: f64,
    /// Debounce lengths tried (alarm when risk ≥ θ on this many consecutive frames), comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,3,5",
        value_name = "FRAMES,..."
    )]
    debounce: Vec<u32>,
    /// Calibrate P(unsafe within SECONDS) instead of P(eventually unsafe).
    #[arg(long, value_name = "SECONDS")]
    horizon: Option<f64>,
    /// Where to write the calibrated model (default: overwrite MODEL).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Calibration logs (not the training logs), or folders searched for `*.h5`.
    #[arg(value_name = "LOG_OR_DIR", required = true)]
    logs: Vec<PathBuf>,
}

/// `10%` → 0.1, `0.1` → 0.1.
fn parse_rate(text: &str) -> Result<f64, String> {
    let (number, scale) = match text.trim().strip_suffix('%') {
        Some(p) => (p, 0.01),
        None => (text.trim(), 1.0),
    };
    let v: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a rate (write 10% or 0.1)"))?;
    let v = v * scale;
    if v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(format!("rate {text} is outside (0, 100 %)"))
    }
}

/// Runs `avguard calibrate`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mut model = crate::modelfile::read(&args.model)?.model;
    let opts = CalibrateOptions {
        target_false_alarm: args.target_false_alarms,
        confidence: args.confidence,
        debounce_frames: args.debounce,
        horizon_s: args.horizon,
    };
    let shared = Arc::new(model.clone());
    let measure = RiskMeasure::resolve(&shared, args.horizon, false)?;
    let logs = crate::batch::expand_logs(&args.logs)?;
    let (series, errors) = series_of_logs(&shared, &measure, &logs, "calibrating")?;
    for (path, e) in &errors {
        eprintln!("skipped {}: {e}", path.display());
    }
    if series.is_empty() {
        bail!("no calibration log could be read ({} given)", logs.len());
    }
    let results = calibrate_model(&mut model, &series, &opts)?;
    let out = args.out.unwrap_or(args.model);
    std::fs::write(&out, model.to_bytes())
        .with_context(|| format!("{}: cannot write", out.display()))?;
    crate::outln!(
        "calibrated on {} runs (target {:.1} % false alarms, {:.0} % confidence) -> {}",
        series.len(),
        100.0 * opts.target_false_alarm,
        100.0 * opts.confidence,
        out.display()
    )?;
    for r in results {
        match r.result {
            Ok(c) => crate::outln!(
                "{}: θ = {:.4}, debounce {} frame(s); false alarms {}/{} safe runs (upper bound {:.1} %); \
                 warned of {}/{} violations{}",
                r.name,
                c.theta,
                c.debounce_frames,
                c.n_false_alarms,
                c.n_safe_runs,
                100.0 * c.false_alarm_upper,
                c.n_predicted,
                c.n_violating_runs,
                c.median_lead_s
                    .map_or_else(String::new, |l| format!(", median lead {l:.1} s"))
            )?,
            Err(e) => crate::outln!("{}: not calibrated: {e}", r.name)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_rate;

    #[test]
    fn rates_parse_as_percent_or_fraction() {
        assert_eq!(parse_rate("10%"), Ok(0.1));
        assert_eq!(parse_rate("0.25"), Ok(0.25));
        assert!(parse_rate("0%").is_err());
        assert!(parse_rate("150%").is_err());
        assert!(parse_rate("ten").is_err());
    }
}
