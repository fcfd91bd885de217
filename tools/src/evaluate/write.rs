//! `evaluate.json` and the two models.

use std::path::Path;

use anyhow::Context;
use monitor::select::AbstractionMode;

use super::{Evaluation, MIN_VIOLATING_FOR_PAIRS, ROBUST_SHARE};
use crate::time_ahead::{calibration_check, summarise, Comparison};

impl Evaluation {
    /// Writes `evaluate.json` ([`Evaluation::json`]) and the two models into `out`, each model as the
    /// file [`Evaluation::model_file_name`] gives it.
    pub fn write(&self, out: &Path) -> anyhow::Result<()> {
        std::fs::create_dir_all(out)
            .with_context(|| format!("{}: cannot create", out.display()))?;
        for result in &self.models {
            let path = out.join(Self::model_file_name(result.mode));
            crate::modelfile::write(&path, &result.model)?;
        }
        let path = out.join("evaluate.json");
        std::fs::write(&path, serde_json::to_vec_pretty(&self.json())?)
            .with_context(|| format!("{}: cannot write", path.display()))
    }

    /// The file name [`Evaluation::write`] gives the model learned with `mode` (`model_auto.bin`).
    pub fn model_file_name(mode: AbstractionMode) -> String {
        format!("model_{}.bin", mode.as_str())
    }

    /// `evaluate.json`: every run of every model, the summaries, curves and dominance, the pair tallies.
    pub fn json(&self) -> serde_json::Value {
        let mut models = Vec::new();
        for (m, result) in self.models.iter().enumerate() {
            let mut properties = serde_json::Map::new();
            for name in self.property_names() {
                let runs = self.runs_of(m, &name);
                let auto = (result.mode == AbstractionMode::Auto)
                    .then(|| self.auto_comparisons().get(&name))
                    .flatten();
                let c = self
                    .comparison(m, &name)
                    .cloned()
                    .unwrap_or_else(|| Comparison::of(&runs));
                let by_theta: serde_json::Map<String, serde_json::Value> = self
                    .thresholds
                    .iter()
                    .map(|(key, _)| {
                        let s = summarise(
                            runs.iter()
                                .filter_map(|r| r.alarms.get(key).map(|a| (*r, a))),
                        );
                        (key.clone(), serde_json::json!(s))
                    })
                    .collect();
                let p = result.model.property(&name);
                let budget_rules = auto.map_or_else(Vec::new, |a| a.budget_rules.clone());
                let rss_tuned = auto.map_or_else(Vec::new, |a| a.rss_tuned.clone());
                let calibrated_against_rss = auto
                    .and_then(|_| self.calibrated_against_rss(&name))
                    .map(|(calibrated, rss, earlier)| {
                        serde_json::json!({
                            "calibrated": calibrated,
                            "rss_tuned": rss,
                            "earlier": earlier,
                        })
                    });
                properties.insert(
                    name.clone(),
                    serde_json::json!({
                        "predicates": p.map(|p| p.predicates().to_vec()),
                        "smoothing": p.map(|p| serde_json::json!({
                            "alpha": p.config().laplace.alpha,
                            "scope": p.config().smoothing.as_str(),
                            "prior": p.config().prior.as_str(),
                        })),
                        "selection": p.and_then(|p| p.selection()),
                        "reactive_rule": p.and_then(|p| p.reactive_rule()),
                        "calibration": p.and_then(|p| p.calibration()),
                        "calibration_check": p
                            .and_then(|p| p.calibration())
                            .and_then(|cal| calibration_check(&runs, cal.target_false_alarm, cal.confidence)),
                        "summary": by_theta,
                        "comparison": c,
                        "budget_rules": budget_rules,
                        "rss_tuned": rss_tuned,
                        "calibrated_against_rss_tuned": calibrated_against_rss,
                    }),
                );
            }
            models.push(serde_json::json!({
                "mode": result.mode.as_str(),
                "model": Self::model_file_name(result.mode),
                "properties": properties,
                "runs": result.runs,
            }));
        }
        let (stored, budget) = self.dominated_pairs();
        serde_json::json!({
            "dominated_pairs": {
                "min_violating_runs": MIN_VIOLATING_FOR_PAIRS,
                "robust_share": ROBUST_SHARE,
                "comparators": stored,
                "budget_rules": budget,
                "rss_tuned": self.rss_tuned_pairs(),
            },
            "n_learn": self.n_learn,
            "n_calibrate": self.n_calibrate,
            "n_test": self.n_test,
            "models": models,
            "errors": self.errors.iter().map(|(p, e)| serde_json::json!({"file": p.display().to_string(), "error": e})).collect::<Vec<_>>(),
        })
    }
}
