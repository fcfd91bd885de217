//! Which number counts as "the risk" of a property at a frame: P(eventually unsafe), P(unsafe within a
//! horizon), or the PAC upper bound of the former. Chosen once per run from the user's options and shared by
//! batch scoring and the live bridge, so that both alarm on the same numbers.

use crate::error::ModelError;
use crate::model::Model;
use crate::session::PropertyOutcome;

/// The risk measure of a scoring or monitoring run.
#[derive(Debug, Clone, PartialEq)]
pub enum RiskMeasure {
    /// P(F unsafe).
    Eventually,
    /// P(F≤k unsafe): for each property (in model order), the index of k in its table's horizons.
    Within(Vec<usize>),
    /// `min(1, P(F unsafe) + ε_s)`, the PAC upper bound.
    Upper,
}

/// Seconds as a reader wants them: at most six decimals, without trailing zeros (30 steps of 0.1 s are
/// 3, not 3.0000000000000004), and in scientific notation beyond a million.
fn seconds(s: f64) -> String {
    if s.abs() >= 1e6 || !s.is_finite() {
        return format!("{s:e}");
    }
    let fixed = format!("{s:.6}");
    fixed.trim_end_matches('0').trim_end_matches('.').to_owned()
}

impl RiskMeasure {
    /// Resolves the options against `model`: a horizon of `horizon_s` seconds must be one of the
    /// horizons every property has a table for; `conservative` selects the PAC upper bound of P(F unsafe).
    ///
    /// # Errors
    /// [`ModelError::Config`] naming the available horizons, or when both options are given.
    pub fn resolve(
        model: &Model,
        horizon_s: Option<f64>,
        conservative: bool,
    ) -> Result<RiskMeasure, ModelError> {
        match (horizon_s, conservative) {
            (Some(_), true) => Err(ModelError::Config(
                "the conservative bound applies to P(eventually); it cannot be combined with a horizon".into(),
            )),
            (None, true) => Ok(RiskMeasure::Upper),
            (None, false) => Ok(RiskMeasure::Eventually),
            (Some(h), false) => model
                .properties()
                .iter()
                .map(|p| {
                    let period = p.config().frame_period_s;
                    let steps = p.table().horizons_steps();
                    let wanted = (h / period).round();
                    steps.iter().position(|&k| f64::from(k) == wanted).ok_or_else(|| {
                        let have: Vec<String> = steps.iter().map(|&k| seconds(f64::from(k) * period)).collect();
                        ModelError::Config(format!(
                            "the model has no {} s table for property {} (it has: {} s); relearn with --horizons",
                            seconds(h),
                            p.name(),
                            have.join(", ")
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(RiskMeasure::Within),
        }
    }

    /// The risk of property `property` (its index in the model) in `outcome`.
    pub fn risk(&self, property: usize, outcome: &PropertyOutcome) -> f64 {
        match self {
            RiskMeasure::Eventually => outcome.risk_eventually,
            RiskMeasure::Upper => outcome.risk_upper,
            RiskMeasure::Within(idx) => idx
                .get(property)
                .and_then(|&h| outcome.risk_within(h))
                .unwrap_or(outcome.risk_eventually),
        }
    }
}
