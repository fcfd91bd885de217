//! avguard's integration tests, compiled as one binary. One module per area.

mod apollo;
mod bridge_accept;
mod bridge_auth;
mod bridge_cli;
mod bridge_e2e;
mod bridge_kill;
mod bridge_limits;
mod cli;
mod demo_cli;
mod evaluate_cli;
mod fuzz_corpus;
mod hdf5_interop;
mod laws_cli;
mod laws_rtamt;
mod limits_cli;
mod monitor_learn;
mod monitor_storm;
mod perturb_cli;
mod scenarios_cli;
mod score_cli;
mod standalone;
mod support;
