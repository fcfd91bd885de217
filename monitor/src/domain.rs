//! The domain interface of the method (the paper's §5.1): what a state space must tell the learner and the
//! solver.
//!
//! A domain numbers its abstract states `0..n_states()` and answers the semantic questions Algorithm 1
//! needs: which states are valid (`get_state_space`), which transitions are possible (`can_reach`, the
//! paper's `is_valid_transition`), which states are unsafe (`filter`) and which are terminal (absorbing).
//! Encoding concrete observations into states is domain-specific and lives on the implementing type (for
//! the AV domain, [`crate::av::AvDomain::encode`]).

use crate::StateId;

/// A finite abstract state space with validity rules.
pub trait Domain {
    /// Size of the state-id space; ids are `0..n_states()` (some may be invalid).
    fn n_states(&self) -> usize;

    /// Whether `state` is semantically possible.
    fn is_valid_state(&self, state: StateId) -> bool;

    /// Whether `from -> to` can happen in one step (`is_valid_transition`). Both must be valid states.
    fn can_reach(&self, from: StateId, to: StateId) -> bool;

    /// Whether `state` is unsafe (the property is violated there). Unsafe states are absorbing.
    fn is_unsafe(&self, state: StateId) -> bool;

    /// Whether `state` is absorbing: unsafe, or a safe terminal state such as "run finished".
    fn is_terminal(&self, state: StateId) -> bool;

    /// The valid successors of the non-terminal state `from` that receive the Laplace pseudo-count α.
    ///
    /// The default is the paper's Algorithm 1: every state `to` with `can_reach(from, to)`. Domains whose
    /// state space is too large for dense smoothing may narrow this (and must document how).
    fn smoothing_support(&self, from: StateId, out: &mut Vec<StateId>) {
        out.clear();
        for to in 0..self.n_states() as StateId {
            if self.can_reach(from, to) {
                out.push(to);
            }
        }
    }

    /// Whether smoothing mass may only go to states observed in the data (plus `from` itself and terminal
    /// states): the learner then drops the other entries of [`Domain::smoothing_support`].
    fn smoothing_observed_only(&self) -> bool {
        false
    }

    /// The predicate values of `state`, in words (the paper's `decode`).
    fn decode(&self, state: StateId) -> String;

    /// All unsafe states (the paper's `filter`).
    fn filter(&self) -> Vec<StateId> {
        (0..self.n_states() as StateId)
            .filter(|&s| self.is_valid_state(s) && self.is_unsafe(s))
            .collect()
    }

    /// All valid states (the paper's `get_state_space`).
    fn get_state_space(&self) -> Vec<StateId> {
        (0..self.n_states() as StateId)
            .filter(|&s| self.is_valid_state(s))
            .collect()
    }
}
