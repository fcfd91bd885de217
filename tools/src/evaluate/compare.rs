//! The auto curve against every comparator, and the pairs it dominates.

use std::collections::BTreeMap;

use monitor::select::AbstractionMode;

use super::{AutoComparison, BudgetRuleResult, Evaluation, PairTally, MIN_VIOLATING_FOR_PAIRS};
use crate::rss_tuned;
use crate::time_ahead::{
    calibrated_is_earlier, dominance, summarise, BudgetPoint, Comparison, CurvePoint, PairedRun,
    RunScore, Summary, FALSE_ALARM_BUDGETS_PCT,
};

impl Evaluation {
    /// The property names, in model order.
    pub fn property_names(&self) -> Vec<String> {
        self.models
            .first()
            .map(|m| {
                m.model
                    .properties()
                    .iter()
                    .map(|p| p.name().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// One property's runs under model `m`.
    pub fn runs_of<'a>(&'a self, m: usize, property: &str) -> Vec<&'a RunScore> {
        self.models
            .get(m)
            .map(|r| r.runs.iter().filter(|s| s.property == property).collect())
            .unwrap_or_default()
    }

    /// Per budget with a rule for `property`: the rule on the test runs against `curve`, the auto model's
    /// curve for that property (the copies that carry the rules share its risks, so they share its curve).
    pub fn budget_rule_comparisons(
        &self,
        property: &str,
        curve: &[CurvePoint],
    ) -> Vec<BudgetRuleResult> {
        self.budget_rules
            .iter()
            .filter_map(|b| {
                let rule = b.model.property(property)?.reactive_rule()?.clone();
                let runs: Vec<&RunScore> =
                    b.runs.iter().filter(|r| r.property == property).collect();
                let summary = summarise(
                    runs.iter()
                        .filter_map(|r| r.reactive_rule.as_ref().map(|a| (*r, a))),
                );
                // The copy carrying the rule has the auto model's risks, so its runs give the curve's side.
                let paired: Vec<PairedRun<'_>> = runs
                    .iter()
                    .filter_map(|r| PairedRun::of(r, |r| r.reactive_rule.as_ref()))
                    .collect();
                let dominance = dominance("reactive_rule", &summary, curve).resampled(&paired);
                Some(BudgetRuleResult {
                    budget_pct: b.budget_pct,
                    rule,
                    dominance,
                    summary,
                })
            })
            .collect()
    }

    /// RSS tuned to each budget for `property` (a collision property; none otherwise) on the test runs
    /// against `curve`, the auto model's curve for it.
    pub fn rss_tuned_comparisons(
        &self,
        property: &str,
        curve: &[CurvePoint],
    ) -> Vec<rss_tuned::TunedResult> {
        self.rss_tuned
            .iter()
            .filter(|t| t.property == property)
            .map(|t| {
                let scale = t.variant.map(|v| rss_tuned::RESPONSE_SCALES[v]);
                let tested = t.variant.map(|_| {
                    let summary =
                        summarise(t.runs.iter().filter_map(|r| r.rss.as_ref().map(|a| (r, a))));
                    let paired: Vec<PairedRun<'_>> = t
                        .runs
                        .iter()
                        .filter_map(|r| PairedRun::of(r, |r| r.rss.as_ref()))
                        .collect();
                    let dominance = dominance("rss_tuned", &summary, curve).resampled(&paired);
                    (summary, dominance)
                });
                rss_tuned::TunedResult {
                    budget_pct: t.budget_pct,
                    response_scale: scale,
                    within_budget: t.within_budget,
                    ego_response_s: t.ego_response_s,
                    learning: t.learning,
                    summary: tested.as_ref().map(|(s, _)| *s),
                    dominance: tested.map(|(_, d)| d),
                }
            })
            .collect()
    }

    /// The auto model's comparisons of the properties with at least [`MIN_VIOLATING_FOR_PAIRS`] violating
    /// test runs: those the tallies count.
    fn counted_comparisons(&self) -> impl Iterator<Item = (&String, &AutoComparison)> {
        self.auto_comparisons().iter().filter(|(_, a)| {
            a.comparison
                .comparators
                .first()
                .is_some_and(|(_, s)| s.n_violating_runs >= MIN_VIOLATING_FOR_PAIRS)
        })
    }

    /// Pairs of the auto curve against RSS tuned to each of [`FALSE_ALARM_BUDGETS_PCT`] (not the
    /// calibration's target unless it is one of them), over the properties with at least
    /// [`MIN_VIOLATING_FOR_PAIRS`] violating test runs.
    pub fn rss_tuned_pairs(&self) -> PairTally {
        let mut tally = PairTally::default();
        for (_, a) in self.counted_comparisons() {
            for t in &a.rss_tuned {
                let listed = FALSE_ALARM_BUDGETS_PCT
                    .iter()
                    .any(|b| (b - t.budget_pct).abs() < 1e-9);
                if let (true, true, Some(d)) = (listed, t.within_budget, &t.dominance) {
                    tally.add(d);
                }
            }
        }
        tally
    }

    /// The calibrated alarm of the auto model for `property` against RSS tuned to the calibration's
    /// target, both on the test runs: (calibrated, RSS's result, whether the calibrated alarm is earlier);
    /// `None` without a calibration or a tuned RSS.
    pub fn calibrated_against_rss(
        &self,
        property: &str,
    ) -> Option<(Summary, rss_tuned::TunedResult, bool)> {
        let m = self
            .models
            .iter()
            .position(|m| m.mode == AbstractionMode::Auto)?;
        let cal = self.models[m].model.property(property)?.calibration()?;
        let calibrated = self.comparison(m, property)?.calibrated?;
        let a = self.auto_comparisons().get(property)?;
        let tuned = a
            .rss_tuned
            .iter()
            .find(|t| (t.budget_pct - 100.0 * cal.target_false_alarm).abs() < 1e-9)?
            .clone();
        let earlier = tuned
            .summary
            .as_ref()
            .is_some_and(|s| calibrated_is_earlier(&calibrated, s));
        Some((calibrated, tuned, earlier))
    }

    /// Model `m`'s comparison of `property` on the test runs, computed once for every model and
    /// property: the printed tables and `evaluate.json` read the same one, resamples included.
    pub fn comparison(&self, m: usize, property: &str) -> Option<&Comparison> {
        self.comparisons
            .get_or_init(|| {
                let names = self.property_names();
                (0..self.models.len())
                    .map(|m| {
                        names
                            .iter()
                            .map(|name| (name.clone(), Comparison::of(&self.runs_of(m, name))))
                            .collect()
                    })
                    .collect()
            })
            .get(m)?
            .get(property)
    }

    /// The auto model's comparison per property with a violating test run, with the rules written for
    /// each budget, computed once.
    pub fn auto_comparisons(&self) -> &BTreeMap<String, AutoComparison> {
        self.auto.get_or_init(|| {
            let Some(m) = self
                .models
                .iter()
                .position(|m| m.mode == AbstractionMode::Auto)
            else {
                return BTreeMap::new();
            };
            self.property_names()
                .into_iter()
                .filter_map(|name| {
                    let comparison = self.comparison(m, &name)?.clone();
                    if comparison
                        .comparators
                        .first()
                        .is_none_or(|(_, s)| s.n_violating_runs == 0)
                    {
                        return None;
                    }
                    let budget_rules = self.budget_rule_comparisons(&name, &comparison.curve);
                    let rss_tuned = self.rss_tuned_comparisons(&name, &comparison.curve);
                    Some((
                        name,
                        AutoComparison {
                            comparison,
                            budget_rules,
                            rss_tuned,
                        },
                    ))
                })
                .collect()
        })
    }

    /// Comparator pairs of the auto curve over the properties with at least
    /// [`MIN_VIOLATING_FOR_PAIRS`] violating test runs: for the comparators every score has (baseline,
    /// RSS, the stored rule), then for the rules written for each budget.
    pub fn dominated_pairs(&self) -> (PairTally, PairTally) {
        let (mut stored, mut budget) = (PairTally::default(), PairTally::default());
        for (_, a) in self.counted_comparisons() {
            for d in &a.comparison.dominance {
                stored.add(d);
            }
            for b in &a.budget_rules {
                budget.add(&b.dominance);
            }
        }
        (stored, budget)
    }

    /// The auto curve's best point at each of the printed false-alarm budgets (5, 10, 20 and 40 %), per
    /// property with at least [`MIN_VIOLATING_FOR_PAIRS`] violating test runs.
    pub fn budget_points(&self) -> Vec<(String, Vec<BudgetPoint>)> {
        self.counted_comparisons()
            .map(|(name, a)| (name.clone(), a.comparison.budgets.clone()))
            .collect()
    }
}
