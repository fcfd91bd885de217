//! `bridge`: the live websocket bridge between a simulator and the monitor.
//!
//! Tour of the main types, in data-flow order:
//! - [`server::run`] accepts websocket connections (rosbridge v2 JSON text frames, protobuf binary
//!   envelopes) and hands each to [`connection::serve`], which answers bad input with `status` errors.
//! - [`connection::serve`] decodes each message with [`ingest::message::SimMessage`] (the input-source
//!   crate holds the protobuf wire types, the decoders and [`ingest::assemble::Assembler`], shared with
//!   the record importer); protobuf types are used here only to encode: outgoing control commands and
//!   [`drive`]'s simulated messages.
//! - [`pipeline::Monitor`] runs assembly → decision ([`decide::Decide`]) → enforcement on plain threads fed
//!   by bounded crossbeam queues, with a swappable model ([`pipeline::ModelStore`]) and a termination
//!   protocol that stops everything if a worker panics.
//! - [`enforce::Enforcer`] turns per-frame risk into alarm episodes (hysteresis), interventions with a
//!   target speed and an explanation, and `clear`s; [`predlog::PredictionLog`] writes them as JSON lines.
//!
//! - [`control_command`] builds the optional Apollo `ControlCommand` of an intervention; [`record`]
//!   streams each connection's frames into an HDF5 run log; [`metrics`] holds the counters, queue gauges and stage
//!   latency histograms reported in [`server::RunReport`] and a periodic log line.
//! - [`drive`] is the scenario generator as a lock-step simulator client; [`blocking`] wraps the async
//!   API (signals, runtime) for the `avguard` binary.
//!
//! Every connection task reports a [`shutdown::ShutdownReason`]; one cancellation tree stops them all.
//! [`config::BridgeConfig`] holds the settings the accept loop and the connections read.
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod auth;
pub mod blocking;
pub mod config;
pub mod connection;
pub mod control_command;
pub mod decide;
pub mod drive;
pub mod enforce;
pub mod metrics;
pub mod models;
pub mod pipeline;
pub mod predlog;
pub mod record;
pub mod rosapi;
pub mod rosbridge;
pub mod run;
pub mod server;
pub mod session;
pub mod shutdown;
pub mod topics;
