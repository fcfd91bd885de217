//! avguard's integration tests, compiled as one binary. One module per area.

mod bridge_cli;
mod cli;
mod hdf5_interop;
mod scenarios_cli;
