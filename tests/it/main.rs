//! avguard's integration tests, compiled as one binary. One module per area.

mod cli;
mod hdf5_interop;
mod laws_rtamt;
mod monitor_learn;
mod monitor_storm;
mod scenarios_cli;
