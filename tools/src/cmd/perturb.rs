//! `avguard perturb`: copies of run logs made harder to read (road users seen late, a perception range,
//! missed road users, no right-of-way marks, no map, noisy poses, lost frames; [`scenarios::perturb`]), to
//! check how much of a model's prediction survives the ways another simulator's logs may differ from the
//! ones it was learned on.
//!
//! Each input log `NAME.h5` is written to `OUT/NAME.h5` with the same attributes (`frame_period_s` too,
//! when frames are dropped: the kept frames keep their times). Its noise, misses and drops are drawn from
//! a stream seeded by `--seed`, the file's name and its frames (their times and the ego's positions), so
//! a file gets the same copy whichever other files are perturbed with it and in whatever order, and two
//! runs that share a file name (`priority_road_0000.h5` of a training set and of a test set) get draws
//! of their own. A log that cannot be read or written fails alone, named with its reason; the others are
//! still written, and the command then exits non-zero.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context};
use scenarios::perturb::{Perturbation, PoseNoise};

/// Arguments of `avguard perturb`.
#[derive(clap::Args)]
pub struct Args {
    /// Output folder (created if missing); each log is written under its own file name.
    #[arg(long)]
    pub out: PathBuf,
    /// Seed of the noise, the misses and the drops (each file's stream also depends on its name and its
    /// frames, so that runs of two sets that share file names draw apart).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Drop road users farther than this from the ego, m.
    #[arg(long, value_name = "METRES", allow_hyphen_values = true)]
    pub perception_range: Option<f64>,
    /// Drop each road user in each frame with this probability (0–1).
    #[arg(
        long,
        value_name = "P",
        default_value_t = 0.0,
        allow_hyphen_values = true
    )]
    pub miss_rate: f64,
    /// Clear every road user's right-of-way mark (`priority`).
    #[arg(long)]
    pub clear_priority: bool,
    /// Give every frame the road fields of a source without a map (nothing ahead, no limit, no light).
    #[arg(long)]
    pub no_map: bool,
    /// Gaussian noise on each road user's pose, every frame: standard deviations of position (m, on x and
    /// on y), speed (m/s) and heading (rad).
    #[arg(long, value_name = "POS,SPEED,HEADING", allow_hyphen_values = true, value_parser = sigmas::<3>)]
    pub obstacle_noise: Option<[f64; 3]>,
    /// Gaussian noise on the ego, every frame: standard deviations of position (m, on x and on y), speed
    /// (m/s), heading (rad) and longitudinal acceleration (m/s²).
    #[arg(
        long,
        value_name = "POS,SPEED,HEADING,ACCEL",
        allow_hyphen_values = true,
        value_parser = sigmas::<4>
    )]
    pub ego_noise: Option<[f64; 4]>,
    /// Drop each frame with this probability (at least 0, below 1), keeping its recorded time on the
    /// frames kept; the first and the last frame and every frame marked `collision` or `destination` are
    /// always kept. Applied last.
    #[arg(
        long,
        value_name = "P",
        default_value_t = 0.0,
        allow_hyphen_values = true
    )]
    pub drop_frames: f64,
    /// Show each frame the road users of the latest frame at least this much earlier, s (0–10); frames
    /// within this of the first have none. The ego is not delayed. Applied first.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 0.0,
        allow_hyphen_values = true
    )]
    pub perception_delay: f64,
    /// Let the delay vary by up to this much either way, s (at most the delay): each frame's road users
    /// arrive after their own delay, drawn uniformly from the delay ± this, and a frame shows the latest
    /// that have arrived, so never older ones than the frame before.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 0.0,
        allow_hyphen_values = true
    )]
    pub perception_jitter: f64,
    /// Log files, or folders (every `*.h5` file below a folder).
    #[arg(required = true, value_name = "LOG_OR_DIR")]
    pub logs: Vec<PathBuf>,
}

impl Args {
    /// The perturbation the options ask for, checked.
    pub fn perturbation(&self) -> anyhow::Result<Perturbation> {
        let p = Perturbation {
            perception_range_m: self.perception_range,
            miss_rate: self.miss_rate,
            clear_priority: self.clear_priority,
            no_map: self.no_map,
            obstacle_noise: self
                .obstacle_noise
                .map_or_else(PoseNoise::default, |[p, s, h]| PoseNoise {
                    position_m: p,
                    speed_mps: s,
                    heading_rad: h,
                    accel_mps2: 0.0,
                }),
            ego_noise: self
                .ego_noise
                .map_or_else(PoseNoise::default, |[p, s, h, a]| PoseNoise {
                    position_m: p,
                    speed_mps: s,
                    heading_rad: h,
                    accel_mps2: a,
                }),
            drop_rate: self.drop_frames,
            perception_delay_s: self.perception_delay,
            perception_jitter_s: self.perception_jitter,
        };
        p.validate()?;
        if p.is_identity() {
            bail!(
                "nothing to perturb: give at least one of --perception-range, --miss-rate, \
                 --clear-priority, --no-map, --obstacle-noise, --ego-noise, --drop-frames, \
                 --perception-delay (with a non-zero value)"
            );
        }
        Ok(p)
    }
}

/// Parses `N` comma-separated standard deviations (their range is checked with the rest of the
/// perturbation, so that the error names the setting).
fn sigmas<const N: usize>(text: &str) -> Result<[f64; N], String> {
    let values: Vec<&str> = text.split(',').map(str::trim).collect();
    if values.len() != N {
        return Err(format!(
            "expected {N} comma-separated numbers, found {}",
            values.len()
        ));
    }
    let mut out = [0.0; N];
    for (slot, v) in out.iter_mut().zip(&values) {
        *slot = v.parse().map_err(|_| format!("'{v}' is not a number"))?;
    }
    Ok(out)
}

/// Runs `avguard perturb`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let perturbation = args.perturbation()?;
    let logs = crate::batch::expand_logs(&args.logs)?;
    // Each output is named by its input's file name: two inputs of one name would overwrite each other,
    // and an input inside the output folder would be overwritten by its own copy.
    let mut names: BTreeMap<&std::ffi::OsStr, &PathBuf> = BTreeMap::new();
    for path in &logs {
        let name = path
            .file_name()
            .with_context(|| format!("{}: not a file name", path.display()))?;
        if let Some(other) = names.insert(name, path) {
            bail!(
                "{} and {} have the same file name, and would be written to the same file in {}",
                other.display(),
                path.display(),
                args.out.display()
            );
        }
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let out_dir = std::fs::canonicalize(&args.out)
        .with_context(|| format!("{}: cannot resolve", args.out.display()))?;
    for path in &logs {
        if std::fs::canonicalize(path).is_ok_and(|p| p.parent() == Some(out_dir.as_path())) {
            bail!(
                "{} is in the output folder {}: its copy would overwrite it",
                path.display(),
                args.out.display()
            );
        }
    }
    let bar = crate::progress::bar(logs.len() as u64, "perturb");
    let results = crate::batch::map_logs_at(
        &logs,
        None,
        || (),
        |_, path, mut log| {
            let name = path.file_name().unwrap_or(path.as_os_str());
            let seed = scenarios::run_seed(args.seed, stream_key(name, &log.frames));
            perturbation.apply(&mut log.frames, seed);
            let out = args.out.join(name);
            scenarios::log::write_log(&out, &log)
                .with_context(|| format!("writing {}", out.display()))?;
            // The input's own attributes too (a writer's name, its settings), as the contract says.
            scenarios::log::copy_root_attributes(path, &out)
                .with_context(|| format!("writing {}", out.display()))?;
            Ok(log.frames.len())
        },
        || bar.inc(1),
    );
    bar.finish_and_clear();
    let mut failed = 0;
    for (path, result) in &results {
        if let Err(e) = result {
            failed += 1;
            eprintln!("{}: {}", path.display(), crate::batch::reason(path, e));
        }
    }
    let written = results.len() - failed;
    crate::outln!(
        "{written} of {} logs perturbed ({}) into {}",
        results.len(),
        describe(&perturbation),
        args.out.display()
    )?;
    if failed > 0 {
        bail!("{failed} of {} logs could not be perturbed", results.len());
    }
    Ok(())
}

/// The perturbation in words, for the summary line.
fn describe(p: &Perturbation) -> String {
    let mut parts = Vec::new();
    if p.perception_delay_s > 0.0 {
        if p.perception_jitter_s > 0.0 {
            parts.push(format!(
                "road users seen {} ± {} s late",
                p.perception_delay_s, p.perception_jitter_s
            ));
        } else {
            parts.push(format!("road users seen {} s late", p.perception_delay_s));
        }
    }
    if let Some(r) = p.perception_range_m {
        parts.push(format!("road users within {r} m"));
    }
    if p.miss_rate > 0.0 {
        parts.push(format!("each missed with probability {}", p.miss_rate));
    }
    if p.clear_priority {
        parts.push("no right-of-way marks".to_owned());
    }
    if p.no_map {
        parts.push("no map".to_owned());
    }
    let n = &p.obstacle_noise;
    if !n.is_none() {
        parts.push(format!(
            "road-user noise σ {} m, {} m/s, {} rad",
            n.position_m, n.speed_mps, n.heading_rad
        ));
    }
    let e = &p.ego_noise;
    if !e.is_none() {
        parts.push(format!(
            "ego noise σ {} m, {} m/s, {} rad, {} m/s²",
            e.position_m, e.speed_mps, e.heading_rad, e.accel_mps2
        ));
    }
    if p.drop_rate > 0.0 {
        parts.push(format!(
            "each frame dropped with probability {}",
            p.drop_rate
        ));
    }
    parts.join("; ")
}

/// What a log's stream is seeded by beside `--seed`: a hash of its file name and of its frames' times and
/// the ego's positions, as read. By the name alone, two sets perturbed with one seed (a training set and
/// a test set of the generator, whose runs are named alike) would draw the same noise run for run.
fn stream_key(name: &std::ffi::OsStr, frames: &[laws::Frame]) -> u64 {
    let mut bytes = name.as_encoded_bytes().to_vec();
    for f in frames {
        for v in [f.t, f.x, f.y] {
            bytes.extend_from_slice(&v.to_bits().to_le_bytes());
        }
    }
    crate::batch::fnv1a(&bytes)
}
