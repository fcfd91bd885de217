//! `monitor`: from frames to predicted risk — abstraction, DTMC learning, PAC bounds, reachability tables.
//!
//! A tour of the main types, in pipeline order:
//! - a [`Domain`] numbers abstract states (`StateId = u32`) and knows which states and transitions are
//!   valid and which states are unsafe or terminal; [`av::AvDomain`] is the AV one (bit-strings of law
//!   predicates plus a "run finished" state);
//! - [`Counts`] accumulates transition counts from abstract traces (Algorithm 1) and merges exactly;
//! - [`estimate::build_dtmc`] turns counts into a row-stochastic [`Dtmc`] with validity-aware Laplace smoothing;
//! - [`PacSummary`] evaluates the PAC sample bound (Eq. 2) per state;
//! - [`RiskTable`] caches, per state, P(F unsafe), P(F≤k unsafe), expected steps and the most likely path,
//!   solved exactly by [`reach`], and [`share::FrameShare`] the frame-share estimate a property's risk may
//!   mix in;
//! - [`spec`] says which predicates make up each property's abstraction (`properties.toml`), and
//!   [`abstraction`] evaluates them on frames, one encoding shared by learning ([`Learner`], [`Plan`]) and
//!   the runtime ([`Session`]);
//! - [`select`] chooses a property's predicates from data (greedy forward selection scored by
//!   cross-validated warnings at fixed false-alarm rates) and the best small reactive rule over the same
//!   candidates; [`calibrate`] sets a property's alarm threshold on calibration runs with a
//!   Clopper–Pearson bound on its false-alarm rate;
//! - [`forest`] holds the small decision trees whose short-horizon share a property's risk may also mix
//!   in ([`select::forest`] grows them);
//! - [`prism`] writes a chain in PRISM's explicit format so Storm or PRISM can check our numbers.
//!
//! **Invariant:** no I/O. Matrices and tables have private fields and are validated on construction, and
//! deserialisation goes through the same validators (see `GUIDELINES.md`).
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod abstraction;
pub mod av;
pub mod calibrate;
pub mod counts;
pub mod domain;
pub mod dtmc;
pub mod error;
pub mod estimate;
pub mod forest;
pub mod model;
pub mod pac;

pub mod learning;
pub mod prism;
pub mod property;
pub mod provenance;
pub mod reach;
pub mod risk;
pub mod select;
pub mod session;
pub mod share;
pub mod spec;
pub mod table;

pub use counts::Counts;
pub use domain::Domain;
pub use dtmc::Dtmc;
pub use error::{ModelError, StructureError};
pub use estimate::LaplaceConfig;
pub use learning::{Learner, Plan};
pub use model::{Model, MAX_PERCEPTION_LATENCY_S};
pub use pac::{PacConfig, PacSummary};
pub use property::{BuildConfig, PropertyModel, SmoothingPrior};
pub use risk::RiskMeasure;
pub use session::{LikelyPath, PropertyOutcome, Session, SessionConfig, StepOutcome};
pub use spec::{PropertySpec, ResolvedProperty};
pub use table::RiskTable;

/// Index of an abstract state.
pub type StateId = u32;
