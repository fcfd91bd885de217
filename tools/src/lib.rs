//! The library behind the `avguard` binary: command implementations (`cmd`), batch scoring (`score`) over
//! the pure time-ahead definitions (`time_ahead`), and the reports (`report`). It is glue over `laws`,
//! `monitor`, `scenarios` and `bridge`; no law, model or protocol logic lives here. It is a library so that benches and tests can call the same code as the binary.

pub mod batch;
pub mod calibration;
pub mod cmd;
pub mod demo;
pub mod evaluate;
pub mod fit;
pub mod lawdir;
pub mod mapfile;
pub mod modelfile;
pub mod progress;
pub mod records;
pub mod report;
pub mod rss_options;
pub mod rss_tuned;
pub mod scenario_runs;
pub mod score;
pub mod stdout;
pub mod time_ahead;
pub mod whole_file;
