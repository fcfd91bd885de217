//! The forest share of a frame: a few small decision trees over the property's candidate predicates,
//! each leaf holding the share of its training frames that were followed by a violation within the
//! forest's horizon, averaged over the trees.
//!
//! **Why a third estimate.** The chain's P(F unsafe) and the frame share ([`crate::share`]) are both
//! functions of the abstract state, a dozen predicates chosen for the chain's reachability. What they
//! cannot see is a short-lived local cell of the signal space — "closing fast and already near the
//! junction" — that the chosen predicates cut across rather than isolate. A decision tree grown on "a
//! violation follows within h s" finds such cells directly: each split is one candidate predicate (a
//! readable atom), each leaf a conjunction of them. One tree is noisy (its splits move with the runs it
//! saw), so the forest averages trees grown on seeded subsets of the runs (bagging). The property's
//! risk is `(1 − w) · risk_chain + w · forest`, with `w` chosen per property on the training runs' folds
//! ([`crate::select::forest::choose_forest_weight`]), so that `w = 0` — no forest — is kept wherever
//! mixing does not warn better there.
//!
//! **What the mixed number is.** The forest's value is the chance of a violation within its horizon,
//! the chain's the chance of one eventually (or within the measure's horizon); their mix is an alarm
//! score that ranks frames, which is all an alarm threshold uses, not a probability of one event.
//! `info` says when a model mixes one in.
//!
//! **Boosted trees.** A forest may instead be grown by gradient boosting
//! ([`crate::select::forest::boost`]): each tree fitted to what the trees before it left unexplained,
//! its leaves holding log-odds steps rather than shares. Its value is then the logistic function of a
//! base log-odds plus the leaves reached, `σ(b + Σ leaf)`, again an estimate of the chance of a
//! violation within the horizon, mixed into the risk as a bagged forest's mean is.
//!
//! **Both kinds.** A forest may also hold bagged trees followed by boosted ones ([`BaggedPart`]); its
//! value is then `a · mean(bagged leaves) + (1 − a) · σ(b + Σ boosted leaves)`. With the bagged and the
//! boosted forest's own weights `w₁`, `w₂` chosen on the folds, weight `(w₁ + w₂)/2` and share
//! `a = w₁/(w₁ + w₂)` make the risk the mean of the two models' risks, one mixing in each forest.
//!
//! Each split's predicate is stored as its text and compiled like the property's own predicates; a
//! split's children come after it in the node list, so every walk ends within the tree's length.

use serde::{Deserialize, Serialize};

use crate::error::StructureError;

/// Most trees a forest may hold.
pub const MAX_TREES: usize = 256;
/// Largest log-odds step a boosted forest's leaf may hold, either sign.
pub const MAX_BOOST_LEAF: f64 = 10.0;
/// Largest base log-odds a boosted forest may start from, either sign.
pub const MAX_BOOST_BASE: f64 = 40.0;
/// Most nodes one tree may hold.
pub const MAX_NODES: usize = 1023;
/// Most distinct split predicates a forest may name.
pub const MAX_PREDICATES: usize = 4096;

/// One node of a tree.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Node {
    /// Goes to `yes` when predicate `predicate` holds, else to `no` (node indices in the same tree, both
    /// after this node's own).
    Split {
        /// Index into the forest's predicates.
        predicate: u32,
        /// The node when the predicate holds.
        yes: u32,
        /// The node when it does not.
        no: u32,
    },
    /// A bagged forest's leaf: the smoothed share of the leaf's training frames followed by a violation
    /// within the horizon. A boosted forest's: the leaf's log-odds step.
    Leaf(f64),
}

/// One tree: node 0 is the root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    /// The nodes, each split before its children.
    pub nodes: Vec<Node>,
}

impl Tree {
    /// The leaf share reached when predicate `i` holds iff `holds(i)`. Total: a split's children come
    /// after it, so the walk takes at most one step per node (a valid tree; an invalid one gives the
    /// value of whatever leaf it stops at, or ½).
    pub fn value(&self, mut holds: impl FnMut(usize) -> bool) -> f64 {
        let mut at = 0usize;
        loop {
            match self.nodes.get(at) {
                Some(&Node::Leaf(v)) => return v,
                Some(&Node::Split { predicate, yes, no }) => {
                    let next = if holds(predicate as usize) { yes } else { no } as usize;
                    if next <= at {
                        return 0.5;
                    }
                    at = next;
                }
                None => return 0.5,
            }
        }
    }
}

/// A property's forest: split predicates (texts), trees, horizon and weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ForestParts")]
pub struct ForestShare {
    weight: f64,
    horizon_steps: u32,
    predicates: Vec<String>,
    trees: Vec<Tree>,
    /// `None` for a bagged forest (its value the mean leaf share); a boosted forest's base log-odds.
    boost: Option<f64>,
    /// A forest of both kinds: its leading bagged trees and their share. Model files carry it in a part
    /// of its own (format 13), so the forest's own encoding is format 12's.
    #[serde(skip)]
    bagged: Option<BaggedPart>,
}

/// The bagged part of a forest of both kinds: its first `trees` trees hold leaf shares, and their mean
/// takes `share` of the forest's value, the boosted trees after them the rest.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BaggedPart {
    /// How many of the forest's trees, from the first, are bagged.
    pub trees: u32,
    /// The bagged trees' share `a` of the forest's value, in (0, 1).
    pub share: f64,
}

/// A forest as model files carry it, before its structure is checked.
#[derive(Deserialize)]
struct ForestParts {
    weight: f64,
    horizon_steps: u32,
    predicates: Vec<String>,
    trees: Vec<Tree>,
    boost: Option<f64>,
}

impl TryFrom<ForestParts> for ForestShare {
    type Error = StructureError;
    fn try_from(p: ForestParts) -> Result<Self, Self::Error> {
        ForestShare::checked(p.weight, p.horizon_steps, p.predicates, p.trees, p.boost)
    }
}

/// A forest as model files of formats 9 to 11 carry it: bagged, with no boost field.
#[derive(Deserialize)]
#[serde(try_from = "LegacyParts")]
pub struct LegacyForest(pub ForestShare);

/// [`LegacyForest`] before its structure is checked.
#[derive(Deserialize)]
struct LegacyParts {
    weight: f64,
    horizon_steps: u32,
    predicates: Vec<String>,
    trees: Vec<Tree>,
}

impl TryFrom<LegacyParts> for LegacyForest {
    type Error = StructureError;
    fn try_from(p: LegacyParts) -> Result<Self, Self::Error> {
        ForestShare::try_new(p.weight, p.horizon_steps, p.predicates, p.trees).map(LegacyForest)
    }
}

impl ForestShare {
    /// Assembles a bagged forest, checking: a weight in [0, 1]; a horizon of at least one step; 1 to
    /// [`MAX_TREES`] trees of 1 to [`MAX_NODES`] nodes; at most [`MAX_PREDICATES`] predicates, each named
    /// by some split; every split's predicate in range and its children after it and inside the tree;
    /// every leaf share in [0, 1].
    ///
    /// # Errors
    /// [`StructureError`] naming the first violated condition.
    pub fn try_new(
        weight: f64,
        horizon_steps: u32,
        predicates: Vec<String>,
        trees: Vec<Tree>,
    ) -> Result<ForestShare, StructureError> {
        ForestShare::checked(weight, horizon_steps, predicates, trees, None)
    }

    /// Assembles a boosted forest starting from log-odds `base`, checked as [`ForestShare::try_new`]
    /// checks a bagged one but for its leaves, each a finite log-odds step of at most
    /// [`MAX_BOOST_LEAF`] either way, and `base`, finite and at most [`MAX_BOOST_BASE`] either way.
    ///
    /// # Errors
    /// [`StructureError`] naming the first violated condition.
    pub fn try_new_boosted(
        weight: f64,
        horizon_steps: u32,
        predicates: Vec<String>,
        trees: Vec<Tree>,
        base: f64,
    ) -> Result<ForestShare, StructureError> {
        ForestShare::checked(weight, horizon_steps, predicates, trees, Some(base))
    }

    fn checked(
        weight: f64,
        horizon_steps: u32,
        predicates: Vec<String>,
        trees: Vec<Tree>,
        boost: Option<f64>,
    ) -> Result<ForestShare, StructureError> {
        let invalid = |s: String| Err(StructureError::Invalid(s));
        if !(0.0..=1.0).contains(&weight) {
            return invalid(format!("forest weight {weight} is not in [0, 1]"));
        }
        if horizon_steps == 0 {
            return invalid("forest horizon of 0 steps".into());
        }
        if let Some(b) = boost {
            if !(b.is_finite() && b.abs() <= MAX_BOOST_BASE) {
                return invalid(format!(
                    "boosted forest base log-odds {b} is not finite within ±{MAX_BOOST_BASE}"
                ));
            }
        }
        if trees.is_empty() || trees.len() > MAX_TREES {
            return invalid(format!(
                "forest of {} trees (1 to {MAX_TREES})",
                trees.len()
            ));
        }
        if predicates.len() > MAX_PREDICATES {
            return invalid(format!(
                "forest names {} predicates (at most {MAX_PREDICATES})",
                predicates.len()
            ));
        }
        let mut used = vec![false; predicates.len()];
        for (t, tree) in trees.iter().enumerate() {
            let n = tree.nodes.len();
            if n == 0 || n > MAX_NODES {
                return invalid(format!("forest tree {t} has {n} nodes (1 to {MAX_NODES})"));
            }
            for (i, node) in tree.nodes.iter().enumerate() {
                match *node {
                    Node::Leaf(v) if boost.is_some() => {
                        if !(v.is_finite() && v.abs() <= MAX_BOOST_LEAF) {
                            return invalid(format!(
                                "boosted forest tree {t}: leaf {i}'s log-odds step {v} is not finite within ±{MAX_BOOST_LEAF}"
                            ));
                        }
                    }
                    Node::Leaf(v) => leaf_share(i, v)?,
                    Node::Split { predicate, yes, no } => {
                        let Some(u) = used.get_mut(predicate as usize) else {
                            return Err(StructureError::OutOfRange {
                                what: "forest split predicate",
                                index: u64::from(predicate),
                                bound: predicates.len() as u64,
                            });
                        };
                        *u = true;
                        for child in [yes, no] {
                            let c = child as usize;
                            if c <= i || c >= n {
                                return invalid(format!(
                                    "forest tree {t}: node {i}'s child {c} is not after it in a tree of {n} nodes"
                                ));
                            }
                        }
                    }
                }
            }
        }
        if let Some(i) = used.iter().position(|u| !u) {
            return invalid(format!("forest predicate {i} is named by no split"));
        }
        Ok(ForestShare {
            weight,
            horizon_steps,
            predicates,
            trees,
            boost,
            bagged: None,
        })
    }

    /// Assembles a forest of both kinds: `bagged` trees (leaf shares) followed by `boosted` ones (log-odds
    /// steps from `base`), the bagged mean taking `share` of the value; each part checked as
    /// [`ForestShare::try_new`] and [`ForestShare::try_new_boosted`] check theirs.
    ///
    /// # Errors
    /// [`StructureError`] naming the first violated condition.
    pub fn try_new_both(
        weight: f64,
        horizon_steps: u32,
        predicates: Vec<String>,
        (bagged, boosted): (Vec<Tree>, Vec<Tree>),
        base: f64,
        share: f64,
    ) -> Result<ForestShare, StructureError> {
        let part = BaggedPart {
            trees: bagged.len() as u32,
            share,
        };
        let trees = bagged.into_iter().chain(boosted).collect();
        ForestShare::checked(weight, horizon_steps, predicates, trees, Some(base))?
            .with_bagged_part(Some(part))
    }

    /// The same forest with `part` as its bagged part (`None`: none).
    ///
    /// # Errors
    /// A part on a forest that is not boosted, a share outside (0, 1), a part of no tree or of every
    /// tree, or a bagged tree whose leaf is not a share in [0, 1].
    pub fn with_bagged_part(self, part: Option<BaggedPart>) -> Result<ForestShare, StructureError> {
        let Some(p) = part else {
            return Ok(ForestShare {
                bagged: None,
                ..self
            });
        };
        let invalid = |s: String| Err(StructureError::Invalid(s));
        if self.boost.is_none() {
            return invalid("a bagged part on a forest that is not boosted".into());
        }
        if !(p.share > 0.0 && p.share < 1.0) {
            return invalid(format!(
                "forest's bagged share {} is not in (0, 1)",
                p.share
            ));
        }
        let n = p.trees as usize;
        if n == 0 || n >= self.trees.len() {
            return invalid(format!(
                "forest's bagged part of {n} trees in a forest of {} (1 to one fewer)",
                self.trees.len()
            ));
        }
        for tree in &self.trees[..n] {
            for (i, node) in tree.nodes.iter().enumerate() {
                if let Node::Leaf(v) = *node {
                    leaf_share(i, v)?;
                }
            }
        }
        Ok(ForestShare {
            bagged: Some(p),
            ..self
        })
    }

    /// A forest of both kinds' bagged part; `None` for a forest of one kind.
    pub fn bagged_part(&self) -> Option<BaggedPart> {
        self.bagged
    }

    /// The same forest with weight `w`.
    ///
    /// # Errors
    /// A weight outside [0, 1].
    pub fn with_weight(self, w: f64) -> Result<ForestShare, StructureError> {
        let part = self.bagged;
        ForestShare::checked(
            w,
            self.horizon_steps,
            self.predicates,
            self.trees,
            self.boost,
        )?
        .with_bagged_part(part)
    }

    /// A boosted forest's base log-odds; `None` for a bagged forest.
    pub fn boost_base(&self) -> Option<f64> {
        self.boost
    }

    /// The weight `w` of the forest in the risk `(1 − w) · risk_chain + w · forest`.
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// The horizon, in steps, of the violations its leaves count.
    pub fn horizon_steps(&self) -> u32 {
        self.horizon_steps
    }

    /// The split predicates' texts.
    pub fn predicates(&self) -> &[String] {
        &self.predicates
    }

    /// The trees.
    pub fn trees(&self) -> &[Tree] {
        &self.trees
    }

    /// The forest's value at a frame where predicate `i` holds iff `holds(i)`: a bagged forest's mean
    /// leaf share, a boosted forest's `σ(base + Σ leaf)`, a forest of both kinds their mix by its
    /// bagged part's share.
    pub fn value(&self, mut holds: impl FnMut(usize) -> bool) -> f64 {
        let mut sum = |trees: &[Tree]| -> f64 { trees.iter().map(|t| t.value(&mut holds)).sum() };
        match (self.boost, self.bagged) {
            (None, _) => sum(&self.trees) / self.trees.len() as f64,
            (Some(base), None) => logistic(base + sum(&self.trees)),
            (Some(base), Some(p)) => {
                let (bagged, boosted) = self.trees.split_at(p.trees as usize);
                let mean = sum(bagged) / bagged.len() as f64;
                p.share * mean + (1.0 - p.share) * logistic(base + sum(boosted))
            }
        }
    }

    /// `risk` mixed with the forest's `value`: `(1 − w) · risk + w · value`, clamped to [0, 1].
    pub fn mix(&self, risk: f64, value: f64) -> f64 {
        ((1.0 - self.weight) * risk + self.weight * value).clamp(0.0, 1.0)
    }
}

/// A bagged tree's leaf `v` at node `i`: a share in [0, 1].
fn leaf_share(i: usize, v: f64) -> Result<(), StructureError> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(StructureError::BadProbability {
            what: "forest leaf",
            state: i,
            value: v,
        })
    }
}

/// A tree of one split on predicate 0: leaf `yes` where it holds, `no` elsewhere (for tests).
#[cfg(test)]
pub(crate) fn one_split(yes: f64, no: f64) -> Tree {
    Tree {
        nodes: vec![
            Node::Split {
                predicate: 0,
                yes: 1,
                no: 2,
            },
            Node::Leaf(yes),
            Node::Leaf(no),
        ],
    }
}

/// The logistic function `1 / (1 + e^−x)`.
pub fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests;
