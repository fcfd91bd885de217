//! Obligation-memory predicates: `L.pending` ("law L has a pending obligation") and `L.pending > x`
//! ("... pending for more than x seconds").
//!
//! For a law with a future-time obligation `A -> F[a,b] B` (a top-level conjunct of its body), an obligation
//! arises at every frame where A holds and is pending while its deadline is still ahead and B has not met
//! it ([`laws::Evaluator::add_obligation`]). These are Pro²Guard's clock variables: with them a property's
//! abstraction can tell "the light turned yellow 1.6 s ago and the ego has not stopped" from "it just
//! turned yellow", which is what makes law38-type violations predictable before their deadline. Canonical
//! texts: `law38_sub2_2.pending`, `law38_sub2_2.pending>1.5`.

use laws::{EvalConfig, Evaluator, LawSet};

/// The suffix that names an obligation predicate.
pub const PENDING_SUFFIX: &str = ".pending";

/// A parsed obligation predicate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PendingPredicate<'a> {
    /// The law.
    pub law: &'a str,
    /// `Some(x)` for "pending for more than x s"; `None` for "pending".
    pub more_than_s: Option<f64>,
}

impl<'a> PendingPredicate<'a> {
    /// Reads `L.pending` or `L.pending > x` (spaces optional, x a non-negative number of seconds).
    /// `None` when the text is not an obligation predicate at all (e.g. an atom), `Some(Err(..))` when it
    /// is one but malformed.
    pub fn parse(text: &'a str) -> Option<Result<PendingPredicate<'a>, String>> {
        let text = text.trim();
        let at = text.find(PENDING_SUFFIX)?;
        let (law, rest) = (&text[..at], text[at + PENDING_SUFFIX.len()..].trim_start());
        if !(rest.is_empty() || rest.starts_with(['>', '<', '='])) {
            return None;
        }
        let bad = |why: &str| Some(Err(format!("obligation predicate '{text}': {why}")));
        if law.is_empty() || !law.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return bad("expected a law name before '.pending'");
        }
        let more_than_s = match rest.strip_prefix('>') {
            None if rest.is_empty() => None,
            Some(x) if !x.starts_with('=') => match x.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Some(x),
                _ => return bad("expected a number of seconds >= 0 after '>'"),
            },
            _ => return bad("the only comparison is 'L.pending > seconds'"),
        };
        Some(Ok(PendingPredicate { law, more_than_s }))
    }

    /// The canonical text: `L.pending` or `L.pending>x`.
    pub fn canonical(&self) -> String {
        match self.more_than_s {
            None => format!("{}{PENDING_SUFFIX}", self.law),
            Some(x) => format!("{}{PENDING_SUFFIX}>{x}", self.law),
        }
    }

    /// The threshold in frames: pending for more than x s ⇔ the age in frames exceeds this.
    pub fn more_than_frames(&self, frame_period_s: f64) -> Option<u64> {
        // Rounding guard: 1.5 s at 0.1 s is 15 frames, not 14.999….
        self.more_than_s
            .map(|x| (x / frame_period_s + 1e-9).floor().max(0.0) as u64)
    }

    /// Checks that the law exists in `laws` and has an obligation.
    ///
    /// # Errors
    /// A message naming the law and what is missing.
    pub fn check(&self, laws: &LawSet) -> Result<(), String> {
        let i = laws
            .index_of(self.law)
            .ok_or_else(|| format!("obligation predicate on unknown law '{}'", self.law))?;
        let mut ev = Evaluator::new(&LawSet::default(), &EvalConfig::default())
            .map_err(|e| e.to_string())?;
        ev.add_obligation(&laws.laws()[i])
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
