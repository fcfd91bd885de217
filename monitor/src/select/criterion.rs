//! The score that the abstraction search maximises, and the reactive-rule choice shares.
//!
//! **What it measures.** The product's claim is "at a given false-alarm rate, more violations warned of,
//! earlier". So a candidate abstraction is scored exactly on that, on runs it was not learned from: for each
//! false-alarm budget b in [`BUDGETS`] (5, 10, 20 and 40 % of safe runs), the alarm threshold is set on the
//! held-out fold's *safe* runs so that at most b of them alarm (the highest threshold-crossing risk among
//! them decides), and then each of the fold's *violating* runs earns
//!
//! ```text
//! u = 0                                          not alarmed strictly before its violation
//! u = 1/2 + 1/2 · min(lead, LEAD_CAP_S) / LEAD_CAP_S   alarmed `lead` seconds before it
//! ```
//!
//! The score is the mean of u over all violating runs and budgets, in [0, 1].
//!
//! **Why this and not a likelihood.** Likelihood rewards predicting the frame-to-frame chain well,
//! mostly the long calm stretches; it does not care whether the risk *ranks* the dangerous moments of
//! violating runs above everything safe runs ever reach, which is all an alarm threshold uses. Fixing
//! the false-alarm rate and measuring recall makes alarms in safe runs cost exactly what they cost a user
//! (a higher threshold, so fewer and later warnings). Half of u is for warning at all and half for warning
//! early, so recall dominates and, between equal recalls, earlier wins; the lead is capped at
//! [`LEAD_CAP_S`] because a warning 30 s ahead is no more useful than one 5 s ahead and very early
//! "warnings" are mostly the base rate of a scenario. Averaging over several budgets keeps the choice from
//! hinging on one operating point, and the 40 % budget keeps high-recall operating points in view.

/// False-alarm budgets (fractions of safe runs) the score averages over.
pub const BUDGETS: [f64; 4] = [0.05, 0.1, 0.2, 0.4];

/// Leads beyond this many seconds earn no more.
pub const LEAD_CAP_S: f64 = 5.0;

/// The utility of one violating run: `None` when not warned before the violation, else the lead in s.
pub fn utility(lead_s: Option<f64>) -> f64 {
    match lead_s {
        None => 0.0,
        Some(lead) => 0.5 + 0.5 * lead.clamp(0.0, LEAD_CAP_S) / LEAD_CAP_S,
    }
}

/// The alarm level for a false-alarm budget: alarms fire on risks strictly above the returned value, so
/// that at most `floor(budget · n)` of the safe runs whose highest risks are `safe_max` alarm
/// (`-inf` when every safe run may alarm). `safe_max` must be sorted in descending order.
pub fn level_for_budget(safe_max: &[f64], budget: f64) -> f64 {
    let allowed = (budget * safe_max.len() as f64 + 1e-9).floor() as usize;
    safe_max.get(allowed).copied().unwrap_or(f64::NEG_INFINITY)
}

/// Appends `(risk, lead)` to a violating run's envelope, the increases of its running maximum risk with
/// the lead (s before the violation) at which each was first reached, when `risk` is a new maximum. The
/// first frame whose risk is above a level is the first envelope entry above it.
pub fn push_envelope(envelope: &mut Vec<(f64, f64)>, risk: f64, lead: f64) {
    if envelope.last().is_none_or(|&(m, _)| risk > m) {
        envelope.push((risk, lead));
    }
}

/// Adds one held-out fold's utilities to `total`: for each budget of [`BUDGETS`], the alarm level set
/// on the fold's safe runs (their highest risks `safe_max`, sorted here in descending order) and each
/// violating run's utility (its envelope from [`push_envelope`]) at that level.
pub fn add_fold_utility(total: &mut f64, safe_max: &mut [f64], envelopes: &[Vec<(f64, f64)>]) {
    safe_max.sort_by(|a, b| b.total_cmp(a));
    for &b in &BUDGETS {
        let level = level_for_budget(safe_max, b);
        for env in envelopes {
            let lead = env.iter().find(|&&(x, _)| x > level).map(|&(_, l)| l);
            *total += utility(lead);
        }
    }
}

/// The share of violating runs (their envelopes from [`push_envelope`]) warned of strictly before their
/// violation at the strictest budget of [`BUDGETS`], the level placed on the safe runs' highest risks
/// `safe_max` (sorted here in descending order); 0 without a violating run. The criterion's utility lets a
/// few more misses be bought with earlier warnings of the rest; this counts the misses alone.
pub fn strict_budget_recall(safe_max: &mut [f64], envelopes: &[Vec<(f64, f64)>]) -> f64 {
    safe_max.sort_by(|a, b| b.total_cmp(a));
    let level = level_for_budget(safe_max, BUDGETS[0]);
    let warned = envelopes
        .iter()
        .filter(|env| env.iter().any(|&(x, _)| x > level))
        .count();
    warned as f64 / envelopes.len().max(1) as f64
}
