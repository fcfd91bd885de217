//! `laws`: the domain vocabulary of avguard and the traffic laws evaluated over it.
//!
//! A [`Frame`] is one tick of the ego vehicle's state and road context, with its [`Obstacle`]s. Every other
//! crate consumes frames; this crate owns the type so that it depends on nothing (no I/O, no tokio, no
//! prost).
#![warn(missing_docs)]

pub mod frame;

pub use frame::{Frame, Obstacle};
