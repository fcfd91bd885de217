//! Reading a property's predicate texts: atoms, window and obligation predicates, conjunctions.

use laws::{Atom, Formula, LawSet};

use crate::error::ModelError;
use crate::forest::ForestShare;
use crate::spec::{PendingPredicate, WINDOW_SUFFIX};

use super::{Encoder, Pred, PropertyDef, UnsafeNow};

pub(super) fn antecedents(body: &Formula, out: &mut Vec<Formula>) {
    match body {
        Formula::Implies(a, _) if a.is_state() => out.push((**a).clone()),
        Formula::And(a, b) => {
            antecedents(a, out);
            antecedents(b, out);
        }
        _ => {}
    }
}

pub(super) fn property_error(p: &PropertyDef<'_>, reason: String) -> ModelError {
    ModelError::Property {
        property: p.name.to_string(),
        reason,
    }
}

/// A predicate text, read once against the model's full law set.
enum PredText<'t> {
    /// `L.w` of a law of the set.
    Window(&'t str),
    /// An obligation predicate of a law of the set (`L.pending`, `L.pending > x`).
    Pending(PendingPredicate<'t>),
    /// A law-language atom.
    Atom(Atom),
    /// A conjunction of literals (predicate, negated): [`CONJUNCTION`]-separated, each as a reactive
    /// rule's literal is written ([`rule_literal`]).
    And(Vec<(PredText<'t>, bool)>),
}

/// What separates the literals of a conjunction predicate (`closestApproach.accTtc<=1.4 & jerk>0`).
pub const CONJUNCTION: &str = " & ";

/// Most literals of one conjunction predicate.
pub const MAX_CONJUNCTION_LITERALS: usize = 4;

impl<'t> PredText<'t> {
    fn read(text: &'t str, full: &LawSet) -> Result<PredText<'t>, String> {
        if text.contains(CONJUNCTION.trim()) {
            let literals: Vec<&str> = text.split(CONJUNCTION.trim()).collect();
            if literals.len() > MAX_CONJUNCTION_LITERALS {
                return Err(format!(
                    "predicate '{text}': a conjunction of {} literals (at most {MAX_CONJUNCTION_LITERALS})",
                    literals.len()
                ));
            }
            return PredText::read_literals(literals, full)
                .map(PredText::And)
                .map_err(|e| format!("in conjunction '{text}': {e}"));
        }
        PredText::read_literal(text, full)
    }

    /// Literals as a reactive rule or a conjunction writes them ([`rule_literal`]), none a conjunction.
    fn read_literals(
        texts: impl IntoIterator<Item = &'t str>,
        full: &LawSet,
    ) -> Result<Vec<(PredText<'t>, bool)>, String> {
        texts
            .into_iter()
            .map(|t| {
                let (text, negated) = rule_literal(t);
                PredText::read_literal(text, full).map(|p| (p, negated))
            })
            .collect()
    }

    /// Literals over the reduced law set.
    fn resolve_literals(
        literals: &[(PredText<'t>, bool)],
        reduced: &LawSet,
        frame_period_s: f64,
    ) -> Result<Vec<(Pred, bool)>, String> {
        literals
            .iter()
            .map(|(p, negated)| p.resolve(reduced, frame_period_s).map(|p| (p, *negated)))
            .collect()
    }

    /// A predicate that is not a conjunction.
    fn read_literal(text: &'t str, full: &LawSet) -> Result<PredText<'t>, String> {
        if text.is_empty() {
            return Err("an empty predicate".into());
        }
        if let Some(law) = text.strip_suffix(WINDOW_SUFFIX) {
            if full.index_of(law).is_some() {
                return Ok(PredText::Window(law));
            }
        }
        if let Some(pending) = PendingPredicate::parse(text) {
            let pending = pending?;
            pending.check(full)?;
            return Ok(PredText::Pending(pending));
        }
        Atom::parse(text)
            .map(PredText::Atom)
            .map_err(|e| format!("predicate '{text}': {e}"))
    }

    /// The laws the predicate reads a verdict or an obligation of.
    fn laws(&self, out: &mut Vec<&'t str>) {
        match self {
            PredText::Window(law) => out.push(law),
            PredText::Pending(p) => out.push(p.law),
            PredText::Atom(_) => {}
            PredText::And(literals) => literals.iter().for_each(|(p, _)| p.laws(out)),
        }
    }

    /// The predicate over the reduced law set.
    fn resolve(&self, reduced: &LawSet, frame_period_s: f64) -> Result<Pred, String> {
        let index = |law: &str| {
            reduced
                .index_of(law)
                .ok_or_else(|| format!("law '{law}' lost while re-parsing"))
        };
        Ok(match self {
            PredText::Window(law) => Pred::Window(index(law)?),
            PredText::Pending(p) => Pred::Pending {
                law: index(p.law)?,
                more_than_frames: p.more_than_frames(frame_period_s),
            },
            PredText::Atom(a) => Pred::Atom(a.clone()),
            PredText::And(literals) => Pred::And(PredText::resolve_literals(
                literals,
                reduced,
                frame_period_s,
            )?),
        })
    }
}

/// One property's texts, read and checked against the full law set.
pub(super) struct ReadProperty<'t> {
    law: &'t str,
    preds: Vec<PredText<'t>>,
    unsafe_bit: usize,
    /// The reactive rule's literals and whether each is negated.
    rule: Vec<(PredText<'t>, bool)>,
    /// The forest's split predicates, and the forest.
    forest: Option<(Vec<PredText<'t>>, &'t ForestShare)>,
}

impl<'t> ReadProperty<'t> {
    pub(super) fn read(p: &PropertyDef<'t>, full: &LawSet) -> Result<ReadProperty<'t>, String> {
        if full.index_of(p.law).is_none() {
            return Err(format!("unknown law '{}'", p.law));
        }
        if p.unsafe_bit >= p.predicates.len() {
            return Err(format!("unsafe bit {} out of range", p.unsafe_bit));
        }
        let preds = p
            .predicates
            .iter()
            .map(|t| PredText::read(t, full))
            .collect::<Result<Vec<_>, _>>()?;
        let rule = PredText::read_literals(p.reactive_rule.iter().map(String::as_str), full)?;
        let forest = p
            .forest
            .map(|f| {
                f.predicates()
                    .iter()
                    .map(|t| PredText::read(t, full).map_err(|e| format!("forest split: {e}")))
                    .collect::<Result<Vec<_>, _>>()
                    .map(|preds| (preds, f))
            })
            .transpose()?;
        Ok(ReadProperty {
            law: p.law,
            preds,
            unsafe_bit: p.unsafe_bit,
            rule,
            forest,
        })
    }

    /// The laws the property needs: its own, then those its predicates and rule read.
    fn laws(&self) -> Vec<&'t str> {
        let mut out = vec![self.law];
        let forest = self.forest.iter().flat_map(|(preds, _)| preds);
        for p in self
            .preds
            .iter()
            .chain(self.rule.iter().map(|(p, _)| p))
            .chain(forest)
        {
            p.laws(&mut out);
        }
        out
    }

    /// The property's encoder over the reduced law set.
    pub(super) fn encoder(&self, reduced: &LawSet, frame_period_s: f64) -> Result<Encoder, String> {
        let preds = self
            .preds
            .iter()
            .map(|p| p.resolve(reduced, frame_period_s))
            .collect::<Result<Vec<_>, _>>()?;
        let law_index = reduced
            .index_of(self.law)
            .ok_or_else(|| format!("law '{}' lost while re-parsing", self.law))?;
        let unsafe_now = match &preds[self.unsafe_bit] {
            Pred::Window(i) => UnsafeNow::Violated(*i),
            Pred::Atom(a) => UnsafeNow::Atom(a.clone()),
            Pred::Pending { .. } | Pred::And(_) => return Err(
                "the unsafe predicate must be `L.w` or an atom, not an obligation or a conjunction"
                    .into(),
            ),
        };
        let mut ante = Vec::new();
        antecedents(reduced.laws()[law_index].body(), &mut ante);
        let rule = PredText::resolve_literals(&self.rule, reduced, frame_period_s)?;
        let forest = self
            .forest
            .as_ref()
            .map(|(preds, f)| {
                preds
                    .iter()
                    .map(|p| p.resolve(reduced, frame_period_s))
                    .collect::<Result<Vec<_>, _>>()
                    .map(|preds| (preds, (*f).clone()))
            })
            .transpose()?;
        Ok(Encoder {
            preds,
            unsafe_bit: self.unsafe_bit,
            unsafe_now,
            antecedents: ante,
            rule,
            forest,
        })
    }
}

/// The laws the properties need, in first-use order, as one self-contained set: each law's formula has
/// earlier laws inlined, so unrelated laws cost nothing per frame; each keeps its file and positions for
/// errors.
pub(super) fn reduced_laws(
    full: &LawSet,
    properties: &[ReadProperty<'_>],
) -> Result<LawSet, ModelError> {
    let mut needed: Vec<&str> = Vec::new();
    for law in properties.iter().flat_map(ReadProperty::laws) {
        if !needed.contains(&law) {
            needed.push(law);
        }
    }
    Ok(full.subset(&needed))
}

/// A reactive-rule literal's predicate text and whether it is negated (`not P`; atoms are negated by
/// their comparison instead, `speed>30`).
pub fn rule_literal(text: &str) -> (&str, bool) {
    match text.trim().strip_prefix("not ") {
        Some(rest) => (rest.trim(), true),
        None => (text.trim(), false),
    }
}
