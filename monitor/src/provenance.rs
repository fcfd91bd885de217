//! How a property's abstraction was chosen, as a model stores it: the mode, the selection trace and the
//! reactive comparator rule. Plain data, below both the search (which makes it) and
//! [`crate::property::PropertyModel`] (which keeps it).

use serde::{Deserialize, Serialize};

/// How a property's predicates were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AbstractionMode {
    /// As declared (the law's atoms plus `properties.toml`).
    Fixed,
    /// By the search of [`crate::select`].
    Auto,
}

impl AbstractionMode {
    /// `fixed` or `auto`.
    pub fn as_str(self) -> &'static str {
        match self {
            AbstractionMode::Fixed => "fixed",
            AbstractionMode::Auto => "auto",
        }
    }
}

/// One step of the selection trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionStep {
    /// The predicate added (the unsafe predicate for the first step).
    pub predicate: String,
    /// Cross-validated score after adding it ([`crate::select::criterion`]).
    pub score: f64,
}

/// How a property's abstraction was chosen, as stored in the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// Fixed or auto.
    pub mode: AbstractionMode,
    /// Candidates in the pool (after dropping those constant on the training runs).
    pub pool_size: usize,
    /// Cross-validation folds.
    pub folds: usize,
    /// Fold seed.
    pub seed: u64,
    /// Training runs.
    pub n_runs: usize,
    /// Training runs that violate the property.
    pub n_violating: usize,
    /// The steps (auto) or the fixed predicates (fixed), each with the score of the set up to it.
    pub steps: Vec<SelectionStep>,
    /// The fixed abstraction's score under the same criterion and folds.
    pub fixed_score: f64,
}

/// The best ≤ 2-literal reactive rule over the pool, chosen on the training runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReactiveRule {
    /// Its literals: predicate texts as in a property (atoms, `L.w`, `L.pending>x`); a negated atom is
    /// written with the negated comparison (`speed>30`), any other negated predicate as `not P`.
    pub literals: Vec<String>,
    /// Violating training runs it warned of, of `n_violating`.
    pub n_predicted: usize,
    /// Violating training runs.
    pub n_violating: usize,
    /// Safe training runs it alarmed in, of `n_safe`.
    pub n_false_alarms: usize,
    /// Safe training runs.
    pub n_safe: usize,
}

impl ReactiveRule {
    /// The rule as text: `speed>30 & NPCAhead<=5`.
    pub fn text(&self) -> String {
        self.literals.join(" & ")
    }
}
