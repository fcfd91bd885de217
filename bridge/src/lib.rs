//! `bridge`: the websocket bridge between a simulator and the monitor.
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod assemble;
pub mod connection;
pub mod decide;
pub mod enforce;
pub mod message;
pub mod pipeline;
pub mod predlog;
pub mod rosbridge;
pub mod server;
pub mod shutdown;
pub mod wire;
