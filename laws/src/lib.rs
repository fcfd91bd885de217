//! `laws`: the domain vocabulary of avguard and the traffic laws evaluated over it.
//!
//! A tour of the main types:
//! - [`Frame`] is one tick of the ego vehicle's state and road context, with its [`Obstacle`]s. Every
//!   other crate consumes frames; this crate owns the type so that it depends on nothing (no I/O, no tokio,
//!   no prost).
//! - [`Signals`] is LawBreaker's signal vocabulary computed from a frame ([`Signals::from_frame`]), in
//!   LawBreaker's units (speed in km/h), with its known bugs and stand-ins fixed (see [`signals`]).
//! - [`SignalStream`] computes a run's signals frame after frame (the prediction signals `jerk`,
//!   `acc.mean1s` and `speedLimit.time` need earlier frames); [`geometry`] holds the ego-frame geometry they share with [`rss`], the
//!   Responsibility-Sensitive Safety check used as a comparator.
//! - [`LawSet::parse`] reads law texts (`name = formula;`, LawBreaker's assertion language) into [`Law`]s;
//!   each law exposes its minimal [`Atom`]s, the monitor's abstraction predicates.
//! - [`Evaluator`] steps every law of a set over a stream of [`Signals`] incrementally (O(1) amortised per
//!   frame per law) and yields [`Verdicts`]: the frame at which a violation becomes certain and "a
//!   violation became certain within the last W frames".
//!
//! - [`shipped`] holds the law files of `laws/specs/`, embedded at build time (for tests, benches and tools).
//!
//! **Invariant:** no I/O. Callers read law files and pass the text in ([`LawSource`]).
#![warn(missing_docs)]

pub mod eval;
#[cfg(test)]
mod fixtures;
pub mod frame;
pub mod geometry;
pub mod lang;
pub mod perception;
pub mod rss;
pub mod shipped;
pub mod signals;

pub use eval::{EvalConfig, EvalError, EvalStats, Evaluator, ObligationHandle, Verdicts};
pub use frame::{Frame, Obstacle};
pub use lang::atom::{Atom, Cmp};
pub use lang::error::ParseError;
pub use lang::formula::{Formula, Interval};
pub use lang::lawset::{Law, LawSet, LawSource, Predicate};
pub use signals::{Signal, SignalContext, SignalStream, Signals};
