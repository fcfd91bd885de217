//! One module per `avguard` command. Each has `Args` (clap) and `run(Args) -> anyhow::Result<()>`.

pub mod bridge;
pub mod calibrate;
pub mod demo;
pub mod drive;
pub mod evaluate;
pub mod export;
pub mod import;
pub mod info;
pub mod inspect;
pub mod laws;
pub mod learn;
pub mod perturb;
pub mod score;
pub mod simulate;
pub mod values;
