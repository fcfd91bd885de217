//! Batch scoring behind `avguard score`: one log at a time through `monitor::Session` (`measure`), a
//! per-log result cache in the output folder (`cache`), and `score.json` plus the reports, also from the
//! union of shard folders (`output`).

mod cache;
mod job;
mod measure;
mod output;

use serde::{Deserialize, Serialize};

use crate::time_ahead::{threshold_key, RunScore};

pub use cache::{cached, load_cached, prepare_out, result_bytes, store, store_bytes};
pub use job::{error_name, Finished, Job, JobSpec, Scorer};
pub use measure::{calibrated_rule, run_series, score_file};
pub use output::{merge, write_outputs, Written};

/// What a scoring run was asked for; a cache is only reused under the same settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// The format of the per-log results this run stores ([`RESULT_FORMAT`]; 0 when absent, as every
    /// version before it wrote them).
    #[serde(default)]
    pub result_format: u32,
    /// FNV-1a hash of the model file's bytes, hex.
    pub model_hash: String,
    /// The thresholds, in the order given.
    pub thresholds: Vec<f64>,
    /// `--horizon`, s.
    pub horizon_s: Option<f64>,
    /// `--conservative`.
    pub conservative: bool,
    /// The RSS comparator's parameters in words (empty: not computed).
    #[serde(default)]
    pub rss: String,
    /// Per property, the model's reactive comparator rule as text.
    #[serde(default)]
    pub rules: std::collections::BTreeMap<String, String>,
    /// Per property, the calibrated (θ, debounce frames) used for the risk measure scored.
    #[serde(default)]
    pub calibrated: std::collections::BTreeMap<String, (f64, u32)>,
    /// Per property, the calibrated alarm's false-alarm target and confidence, checked on the scored runs.
    #[serde(default)]
    pub calibration_targets: std::collections::BTreeMap<String, (f64, f64)>,
    /// Per collision property whose model stores an RSS tuning, the factor on CARLA's response times
    /// of the RSS comparator tuned to its false-alarm target on the calibration runs.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub rss_tuned: std::collections::BTreeMap<String, f64>,
    /// Whether the model's risk mixes in a frame share ([`monitor::Model::mixes_frame_share`]).
    #[serde(default)]
    pub frame_share: bool,
    /// Whether the model's risk mixes in a forest ([`monitor::Model::mixes_forest`]; not in the PAC bound).
    #[serde(default)]
    pub forest: bool,
    /// FNV-1a hash of the `--map` file's bytes, hex (road fields of `.record` inputs depend on it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_hash: Option<String>,
}

/// The format of the per-log results (`OUT/runs/*.json`) and so of a run's `settings.json`: 1 since the
/// runs carry `unsafe_from_start`. A cache or shard of another format is neither resumed nor merged, since
/// its runs lack what this version reports (0: written before the format was recorded).
pub const RESULT_FORMAT: u32 = 1;

impl Settings {
    /// Settings of a run over the model whose file holds `model_bytes`.
    pub fn new(
        model_bytes: &[u8],
        thresholds: &[f64],
        horizon_s: Option<f64>,
        conservative: bool,
    ) -> Settings {
        Settings {
            result_format: RESULT_FORMAT,
            model_hash: fnv1a_hex(model_bytes),
            map_hash: None,
            thresholds: thresholds.to_vec(),
            horizon_s,
            conservative,
            rss: String::new(),
            rules: std::collections::BTreeMap::new(),
            calibrated: std::collections::BTreeMap::new(),
            calibration_targets: std::collections::BTreeMap::new(),
            rss_tuned: std::collections::BTreeMap::new(),
            frame_share: false,
            forest: false,
        }
    }

    /// Records that the road fields of `.record` inputs come from the map file holding `map_bytes`.
    pub fn with_map(mut self, map_bytes: &[u8]) -> Settings {
        self.map_hash = Some(fnv1a_hex(map_bytes));
        self
    }

    /// (key, θ) pairs as `score.json` writes them.
    pub fn threshold_pairs(&self) -> Vec<(String, f64)> {
        self.thresholds
            .iter()
            .map(|&t| (threshold_key(t), t))
            .collect()
    }

    /// The risk measure in words, for the reports.
    pub fn risk_measure_words(&self) -> String {
        let base = match self.horizon_s {
            Some(h) => format!("P(unsafe within {h} s)"),
            None => "P(eventually unsafe)".to_owned(),
        };
        let base = if self.conservative {
            format!("the PAC upper bound of {base} (p + ε)")
        } else {
            base
        };
        crate::report::risk_words(&base, self.frame_share, self.forest && !self.conservative)
    }
}

/// FNV-1a (64-bit) of `bytes`, hex: a cheap fingerprint for cache keys, not a security hash.
fn fnv1a_hex(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// One property's risk over one run, kept for the report's plots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// The run (a Cyber recording may hold several; empty in caches written before runs were named).
    #[serde(default)]
    pub run_id: String,
    /// The property.
    pub property: String,
    /// Frame times, s (down-sampled to at most `MAX_TRACE_POINTS`).
    pub t: Vec<f64>,
    /// Risk at those frames.
    pub risk: Vec<f64>,
}

/// Everything scoring one log produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileResult {
    /// The log's file name.
    pub file: String,
    /// Frames in the log (in all its runs).
    pub n_frames: usize,
    /// One score per run and property (a log is one run; a Cyber recording may hold several).
    pub scores: Vec<RunScore>,
    /// Risk traces of the properties this run violated or false-alarmed on.
    pub traces: Vec<TraceRecord>,
}

/// Traces are thinned to this many points; at 10 Hz that is every frame of a 60 s run.
pub const MAX_TRACE_POINTS: usize = 600;
