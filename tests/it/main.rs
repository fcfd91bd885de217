//! avguard's integration tests, compiled as one binary. One module per area.

mod cli;
mod monitor_storm;
