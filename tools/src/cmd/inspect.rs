//! `avguard inspect`: validate logs and summarise each one (frames, duration, collisions, law-relevant
//! extremes, how its road users step and turn), read in parallel and listed in the order given. A bad
//! file is reported with its problem and the command exits non-zero after listing all. After the logs, what their road users say together and how `avguard
//! learn` would read them by default ([`crate::fit::road_user_summary`]): smoothed, their
//! velocities smoothed, moved ahead by a latency, or as logged — so that another source's logs can be
//! looked at before a model is learned from them.

use std::path::{Path, PathBuf};

use laws::geometry::latency;
use laws::perception::{RoadUserReading, RunReading};
use rayon::prelude::*;
use scenarios::log::{read_log_isolated, RunLog};

/// Arguments of `avguard inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// Print one JSON object per log (one per line) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Log files, or folders (every `*.h5` file below a folder, in path order).
    #[arg(required = true, value_name = "LOG_OR_DIR")]
    pub logs: Vec<PathBuf>,
}

/// Law-relevant summary of one valid log.
struct Summary {
    scenario: String,
    run_id: String,
    frames: usize,
    duration_s: f64,
    collision: bool,
    first_collision_t: Option<f64>,
    destination: bool,
    max_speed_kph: f64,
    max_over_limit_kph: f64,
    max_decel_mps2: f64,
    min_obstacle_gap_m: f64,
    ran_red: bool,
    /// How its road users step and turn, read as `learn` reads them ([`crate::fit::default_reading`]).
    reading: RunReading,
}

fn summarise(log: &RunLog) -> Summary {
    let frames = &log.frames;
    let first_t = frames.first().map_or(0.0, |f| f.t);
    let last_t = frames.last().map_or(0.0, |f| f.t);
    let mut s = Summary {
        scenario: log.meta.scenario.clone(),
        run_id: log.meta.run_id.clone(),
        frames: frames.len(),
        duration_s: last_t - first_t,
        collision: false,
        first_collision_t: None,
        destination: frames.iter().any(|f| f.destination),
        max_speed_kph: 0.0,
        max_over_limit_kph: f64::NEG_INFINITY,
        max_decel_mps2: 0.0,
        min_obstacle_gap_m: f64::INFINITY,
        ran_red: false,
        reading: crate::fit::default_reading(frames),
    };
    for f in frames {
        if f.collision && s.first_collision_t.is_none() {
            s.collision = true;
            s.first_collision_t = Some(f.t);
        }
        s.max_speed_kph = s.max_speed_kph.max(f.speed_mps * 3.6);
        if f.speed_limit_mps.is_finite() {
            s.max_over_limit_kph = s
                .max_over_limit_kph
                .max((f.speed_mps - f.speed_limit_mps) * 3.6);
        }
        s.max_decel_mps2 = s.max_decel_mps2.max(-f.accel_mps2);
        // Centre-to-centre distance minus both half lengths: a cheap lower bound of the footprint gap.
        for o in &f.obstacles {
            let gap =
                (o.x - f.x).hypot(o.y - f.y) - o.length / 2.0 - laws::frame::EGO_LENGTH_M / 2.0;
            s.min_obstacle_gap_m = s.min_obstacle_gap_m.min(gap.max(0.0));
        }
        if f.light_color == laws::frame::light_color::RED && f.lane_number == 0 && f.speed_mps > 0.5
        {
            s.ran_red = true;
        }
    }
    s
}

/// How many logs are read in parallel before their lines are printed: enough to keep every core busy,
/// few enough that lines follow each other while a large folder is read.
const BATCH_LOGS: usize = 64;

/// Runs `avguard inspect`.
pub fn run(args: Args) -> anyhow::Result<()> {
    // Folders are expanded; a file is kept as given, even one that cannot be read, so that it is
    // reported in its place like any other bad log.
    let mut logs = Vec::with_capacity(args.logs.len());
    for path in &args.logs {
        if path.is_dir() {
            logs.extend(crate::batch::expand_logs(std::slice::from_ref(path))?);
        } else {
            logs.push(path.clone());
        }
    }
    let mut bad = 0;
    let mut reading = RoadUserReading::default();
    // Read in parallel a batch at a time, each batch's lines printed in the logs' order as it is done.
    for batch in logs.chunks(BATCH_LOGS) {
        let results: Vec<_> = batch
            .par_iter()
            .map(|path| read_log_isolated(path).map(|log| summarise(&log)))
            .collect();
        for (path, result) in batch.iter().zip(&results) {
            match result {
                Ok(s) => reading.add(&s.reading),
                Err(_) => bad += 1,
            }
            if args.json {
                crate::outln!("{}", json_line(path, result))?;
            } else {
                crate::outln!("{}", text_line(path, result))?;
            }
        }
    }
    let n_read = logs.len() - bad;
    if n_read > 0 {
        let words = crate::fit::road_user_summary(&reading, n_read);
        // `--json` keeps stdout to one object per log.
        if args.json {
            eprintln!("{words}");
        } else {
            crate::outln!("{words}")?;
        }
    }
    if bad > 0 {
        anyhow::bail!("{bad} of {} logs are invalid", logs.len());
    }
    Ok(())
}

fn text_line(path: &Path, result: &Result<Summary, scenarios::log::LogError>) -> String {
    match result {
        Err(e) => format!(
            "{}: INVALID: {}",
            path.display(),
            crate::batch::reason(path, e)
        ),
        Ok(s) => format!(
            "{}: ok, scenario {}, run {}, {} frames, {:.1} s, collision {}{}, destination {}, max speed {:.1} km/h, \
             max over limit {:.1} km/h, max decel {:.1} m/s², min gap to obstacles {:.1} m, moving in junction on red {}",
            path.display(),
            s.scenario,
            s.run_id,
            s.frames,
            s.duration_s,
            if s.collision { "yes" } else { "no" },
            s.first_collision_t.map(|t| format!(" (t = {t:.1} s)")).unwrap_or_default(),
            if s.destination { "reached" } else { "not reached" },
            s.max_speed_kph,
            s.max_over_limit_kph,
            s.max_decel_mps2,
            s.min_obstacle_gap_m,
            if s.ran_red { "yes" } else { "no" },
        ),
    }
}

fn json_line(path: &Path, result: &Result<Summary, scenarios::log::LogError>) -> String {
    let file = path.display().to_string();
    let value = match result {
        Err(e) => serde_json::json!({
            "file": file, "ok": false, "frames": null, "duration_s": null, "collision": null,
            "error": e.to_string(),
        }),
        Ok(s) => serde_json::json!({
            "file": file, "ok": true, "frames": s.frames, "duration_s": num(s.duration_s),
            "collision": s.collision, "error": null,
            "scenario": s.scenario, "run_id": s.run_id,
            "first_collision_t": s.first_collision_t.map(num),
            "destination": s.destination,
            "max_speed_kph": num(s.max_speed_kph),
            "max_over_limit_kph": num(s.max_over_limit_kph),
            "max_decel_mps2": num(s.max_decel_mps2),
            "min_obstacle_gap_m": num(s.min_obstacle_gap_m),
            "moving_on_red_in_junction": s.ran_red,
            "road_users": road_users_json(&s.reading),
        }),
    };
    value.to_string()
}

/// A log's road-user reading as `inspect --json` gives it: its steps compared with their speeds and
/// those off by more than half, its pairs of steps and those turning an acceleration around, and whether
/// its first collision frame shows the ego touching a road user as logged (`null` without a collision).
fn road_users_json(r: &RunReading) -> serde_json::Value {
    serde_json::json!({
        "steps": r.steps.steps,
        "jumps": r.steps.jumps,
        "velocity_pairs": r.flips.pairs,
        "velocity_flips": r.flips.flips,
        "first_collision_touches_as_logged": r.contact.map(latency::touches_as_logged),
    })
}

/// A JSON number rounded to 1e-3; non-finite values (no obstacles, no limit) become `null`.
fn num(v: f64) -> serde_json::Value {
    if v.is_finite() {
        serde_json::Value::from((v * 1000.0).round() / 1000.0)
    } else {
        serde_json::Value::Null
    }
}
