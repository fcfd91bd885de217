//! `bridge`: the websocket bridge between a simulator and the monitor.
#![warn(missing_docs)]
