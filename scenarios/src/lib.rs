//! `scenarios`: the seeded driving-scenario generator and the HDF5 run-log format.
//!
//! A tour of the main types:
//! - [`Scenario`] is a validated scenario file (`scenarios/*.toml`): road geometry, traffic-light timing, the
//!   ego driver's parameter ranges, and the other road users. Files carry a top-level `[scenario]` table.
//! - [`Simulation`] steps one seeded run at the scenario's frame period and yields one [`laws::Frame`] per
//!   tick. It can be driven closed-loop: every [`Simulation::step`] takes a [`Command`] (a speed cap from
//!   avguard's enforcement). [`run`] is the open-loop shorthand used for training data.
//! - [`log`] reads and writes the HDF5 run-log format of INTERFACES §2 ([`log::LogWriter`] streams,
//!   [`log::read_log`] validates).
//!
//! Why a home-grown simulator: the method needs many independent runs per scenario whose diversity comes
//! from traffic, timing and driver behaviour, with both safe and violating outcomes. The simulator is
//! kinematic (no tyre or body dynamics) but the driver policy is a standard car-following model (IDM) with
//! reaction delay, attention lapses and randomised aggressiveness, which is what decides whether a run
//! violates a law.
//!
//! Invariant: a run is a pure function of (scenario, seed); nothing iterates a hash map and every random draw
//! comes from the run's own ChaCha8 stream.
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod collision;
mod ego;
pub mod light;
pub mod log;
mod npc;
pub mod perturb;
pub mod road;
pub mod scenario;
pub mod seed;
mod sim;

pub use scenario::{Scenario, ScenarioError};
pub use seed::run_seed;
pub use sim::{run, Command, Simulation};
