//! `Span`: a scenario number that is either fixed or a `[min, max]` range sampled once per run.

use serde::Deserialize;

/// A number or a `[min, max]` range sampled uniformly per run.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "SpanRepr")]
pub struct Span {
    lo: f64,
    hi: f64,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SpanRepr {
    One(f64),
    Two([f64; 2]),
}

impl TryFrom<SpanRepr> for Span {
    type Error = String;
    fn try_from(repr: SpanRepr) -> Result<Self, String> {
        let (lo, hi) = match repr {
            SpanRepr::One(v) => (v, v),
            SpanRepr::Two([lo, hi]) => (lo, hi),
        };
        if !(lo.is_finite() && hi.is_finite()) || lo > hi {
            return Err(format!("range [{lo}, {hi}] must be finite with min <= max"));
        }
        Ok(Span { lo, hi })
    }
}

impl Span {
    /// A fixed value.
    pub const fn fixed(v: f64) -> Span {
        Span { lo: v, hi: v }
    }
    /// A range; `lo <= hi` and both finite (checked by the deserializer; this constructor is for defaults).
    pub(crate) const fn range(lo: f64, hi: f64) -> Span {
        Span { lo, hi }
    }
    /// Lower bound.
    pub fn lo(&self) -> f64 {
        self.lo
    }
    /// Upper bound.
    pub fn hi(&self) -> f64 {
        self.hi
    }
    /// One uniform draw.
    pub(crate) fn sample(&self, rng: &mut impl rand::Rng) -> f64 {
        if self.hi > self.lo {
            rng.random_range(self.lo..=self.hi)
        } else {
            self.lo
        }
    }
}
