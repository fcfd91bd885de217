//! `avguard bridge`: the live websocket bridge (INTERFACES §1 and §3).
//!
//! Flags map onto `bridge::config::BridgeConfig`; the process-level policy (SIGINT/SIGTERM → graceful
//! shutdown and exit 0, SIGHUP → reload the model from the same path) is `bridge::blocking`.
//!
//! Model loading goes through `monitor::Session` behind `bridge::decide::DecideFactory`
//! (`bridge::session::MonitorFactory`); the same session code scores recorded logs in `avguard score`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bridge::auth::Token;
use bridge::config::{BridgeConfig, Reloader};
use bridge::decide::DecideFactory;
use bridge::enforce::{Action, EnforceConfig};
use bridge::pipeline::{ModelStore, MonitorConfig};
use bridge::record::RecordConfig;
use ingest::assemble::AssemblerConfig;

/// What an intervention asks for.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Mode {
    /// Slow down to a speed from which the law can still be met.
    SlowDown,
    /// Stop.
    Stop,
    /// Only alert.
    Alert,
}

/// Arguments of `avguard bridge`.
#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on (`ws://ADDR/`). Binding beyond loopback requires --token.
    #[arg(long, default_value = "127.0.0.1:9090")]
    pub listen: SocketAddr,
    /// Model file written by `avguard learn`.
    #[arg(long)]
    pub model: PathBuf,
    /// θ: intervene when a property's risk reaches it. Without it, each property's calibrated θ and
    /// debounce (`avguard calibrate`) are used — for a collision property, the lower θ its
    /// interventions were calibrated at (`--enforce-target-false-alarms`) where the model has one — and
    /// 0.5 for properties without one.
    #[arg(long)]
    pub threshold: Option<f64>,
    /// Risk within this many seconds instead of eventually.
    #[arg(long)]
    pub horizon: Option<f64>,
    /// Intervention kind.
    #[arg(long, value_enum, default_value = "slow-down")]
    pub mode: Mode,
    /// Prediction log (JSON lines: alarm start/end, violations, interventions).
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Record each run's frames as an HDF5 log (connection K ≥ 2 writes FILE_connK.h5, later runs on a
    /// connection FILE_RUN.h5 with RUN its run id).
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Apollo HD map (base_map.bin, or protobuf text *.txt): road fields are computed from each frame's
    /// pose; /avguard/road_context then only overrides them.
    #[arg(long, value_name = "FILE")]
    pub map: Option<PathBuf>,
    /// A forward jump in message time larger than this starts a new run, s.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub gap_limit: f64,
    /// Also publish an Apollo ControlCommand on /apollo/control with each slow-down/stop.
    #[arg(long)]
    pub control_command: bool,
    /// An alarm episode ends when risk falls below θ minus this.
    #[arg(long, default_value_t = 0.1)]
    pub hysteresis: f64,
    /// Braking deceleration assumed for slow-down target speeds and the brake check, m/s².
    #[arg(long, default_value_t = 3.0)]
    pub decel_mps2: f64,
    /// Brake check horizon, s (0 to 10; 0 turns it off): before a slow-down or stop, braking and keeping
    /// on are rolled out this far, and an alert is sent instead when braking would leave the vehicle in
    /// another road user's path and keeping on would not.
    #[arg(long, value_name = "SECONDS", default_value_t = bridge::enforce::DEFAULT_BRAKE_CHECK_S,
          value_parser = parse_enforce_seconds)]
    pub brake_check: f64,
    /// Shortest alarm episode of a collision property (one whose unsafe predicate is the collision flag),
    /// s (0 to 10): its slow-down is not cleared sooner, since braking lowers the risk at once and a
    /// clear would let the vehicle go on into the conflict.
    #[arg(long, value_name = "SECONDS", default_value_t = bridge::enforce::DEFAULT_COLLISION_HOLD_S,
          value_parser = parse_enforce_seconds)]
    pub collision_hold: f64,
    /// Frame period of the assembled frames, s (default: the model's; another is refused, since the
    /// model steps once per frame).
    #[arg(long)]
    pub frame_period_s: Option<f64>,
    /// Shared secret clients present as `?token=...` or `Authorization: Bearer ...` (characters
    /// A-Z a-z 0-9 - . _ ~). Also read from AVGUARD_TOKEN; prefer that or --token-file, since a flag is
    /// visible to every user in `ps`.
    #[arg(long, env = "AVGUARD_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// File holding the shared secret (its text without the final line break); instead of --token.
    #[arg(long, conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
    /// Messages above this get a status error and the connection goes on, bytes (at least 1024). Above 4
    /// times this (the hard limit) a message is not read: the connection is closed with code 1009
    /// (message too big) and a reason naming its size and the limit.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_frame_bytes: usize,
    /// Simultaneous simulator connections.
    #[arg(long, default_value_t = 64)]
    pub max_connections: usize,
    /// A connection that has not completed its websocket handshake this long after it was accepted is
    /// closed and its slot freed, s (0.1 to 300).
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub handshake_timeout_s: f64,
    /// Monitor worker threads.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Force every prediction-log line and recording flush to the disk (fsync), so that they survive a
    /// power loss as well as a crash (a crash alone loses nothing flushed without it).
    #[arg(long)]
    pub fsync: bool,
    /// Seconds between `bridge metrics` log lines (0 = only at exit).
    #[arg(long, default_value_t = 10.0)]
    pub metrics_every_s: f64,
}

/// Loads the model file as the bridge's decision factory, with the frame period it steps at; the risk is
/// P(eventually unsafe), or P(unsafe within `horizon_s`) when given. A model stepping at another period
/// than `period_s` (when given) is refused.
pub fn load_model(
    path: &Path,
    horizon_s: Option<f64>,
    period_s: Option<f64>,
) -> anyhow::Result<(Box<dyn DecideFactory>, f64)> {
    let model = crate::modelfile::read(path)?.model;
    let model_period = model.frame_period_s();
    if let Some(p) = period_s {
        anyhow::ensure!(
            crate::batch::same_frame_period(p, model_period),
            "{}: the model steps every {model_period:?} s, but frames are assembled every {p:?} s",
            path.display()
        );
    }
    let factory =
        bridge::session::MonitorFactory::new(model, horizon_s, path.display().to_string())
            .with_context(|| format!("{}", path.display()))?;
    Ok((Box::new(factory), model_period))
}

/// θ for properties without a calibration when no `--threshold` is given.
const DEFAULT_THRESHOLD: f64 = 0.5;

/// Says which θ each property is enforced at when no `--threshold` is given.
fn describe_thresholds(path: &Path, horizon_s: Option<f64>) -> anyhow::Result<String> {
    let shared = std::sync::Arc::new(crate::modelfile::read(path)?.model);
    let measure = monitor::RiskMeasure::resolve(&shared, horizon_s, false)?;
    let parts: Vec<String> = shared
        .properties()
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if let Some((theta, _)) =
                monitor::calibrate::enforcement_for_measure(&shared, i, &measure)
            {
                return format!("{} θ={theta:.3} calibrated for interventions", p.name());
            }
            match monitor::calibrate::for_measure(&shared, i, &measure) {
                Some((theta, m)) if m > 1 => {
                    format!("{} calibrated θ={theta:.3} for {m} frames", p.name())
                }
                Some((theta, _)) => format!("{} calibrated θ={theta:.3}", p.name()),
                None => format!("{} θ={DEFAULT_THRESHOLD} (not calibrated)", p.name()),
            }
        })
        .collect();
    Ok(parts.join(", "))
}

/// The longest interval between metrics lines, s (a day).
const MAX_METRICS_EVERY_S: f64 = 86_400.0;

/// The range of `--handshake-timeout-s`, s.
const HANDSHAKE_TIMEOUT_S: std::ops::RangeInclusive<f64> = 0.1..=300.0;

/// The smallest frame limit, bytes: below it even a rosbridge `advertise` op is refused.
const MIN_FRAME_BYTES: usize = 1024;

/// Refuses service options under which the bridge could not serve, or would serve other than asked: no
/// connection, a frame limit no message fits, no worker or more threads than a machine has, a braking
/// deceleration that is not one (it was silently raised to 0.1 m/s²), a hysteresis under which an alarm
/// episode never ends, a metrics interval that is not a duration, a handshake deadline too short for a real
/// client or long enough to let idle sockets hold every connection slot.
fn check_service_options(args: &Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        (1..=256).contains(&args.workers),
        "--workers must be between 1 and 256"
    );
    anyhow::ensure!(
        args.max_connections >= 1,
        "--max-connections must be at least 1"
    );
    anyhow::ensure!(
        HANDSHAKE_TIMEOUT_S.contains(&args.handshake_timeout_s),
        "--handshake-timeout-s must be between {} and {} seconds",
        HANDSHAKE_TIMEOUT_S.start(),
        HANDSHAKE_TIMEOUT_S.end()
    );
    anyhow::ensure!(
        args.max_frame_bytes >= MIN_FRAME_BYTES,
        "--max-frame-bytes must be at least {MIN_FRAME_BYTES}"
    );
    anyhow::ensure!(
        args.decel_mps2.is_finite() && args.decel_mps2 > 0.0 && args.decel_mps2 <= 20.0,
        "--decel-mps2 must be a deceleration in (0, 20] m/s²"
    );
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.hysteresis),
        "--hysteresis must be in [0, 1]"
    );
    anyhow::ensure!(
        (0.0..=MAX_METRICS_EVERY_S).contains(&args.metrics_every_s),
        "--metrics-every-s must be between 0 and {MAX_METRICS_EVERY_S} seconds"
    );
    Ok(())
}

/// Runs `avguard bridge`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(theta) = args.threshold {
        anyhow::ensure!(
            (0.0..=1.0).contains(&theta),
            "--threshold must be in [0, 1]"
        );
    }
    if let Some(h) = args.horizon {
        anyhow::ensure!(h.is_finite() && h > 0.0, "--horizon must be positive");
    }
    check_service_options(&args)?;
    let token = match (&args.token, &args.token_file) {
        (Some(text), _) => Some(Token::new(text, "--token / AVGUARD_TOKEN")?),
        (None, Some(path)) => Some(Token::from_file(path)?),
        (None, None) => None,
    };
    anyhow::ensure!(
        args.listen.ip().is_loopback() || token.is_some(),
        "binding {} beyond loopback requires a token (--token-file, AVGUARD_TOKEN or --token)",
        args.listen
    );
    if let Some(p) = args.frame_period_s {
        anyhow::ensure!(
            p.is_finite() && p > 0.0,
            "--frame-period-s must be a positive number of seconds"
        );
    }
    let (factory, frame_period_s) = load_model(&args.model, args.horizon, args.frame_period_s)?;
    let assembler = AssemblerConfig {
        period_s: frame_period_s,
        max_gap_s: args.gap_limit,
        ..AssemblerConfig::default()
    };
    assembler
        .check()
        .map_err(|e| anyhow::anyhow!("--frame-period-s / --gap-limit: {e}"))?;
    if args.threshold.is_none() {
        eprintln!(
            "no --threshold: enforcing {}",
            describe_thresholds(&args.model, args.horizon)?
        );
    }
    let map = crate::mapfile::load(args.map.as_deref())?;
    let model_path = args.model.clone();
    let horizon = args.horizon;
    let reload: Reloader = Arc::new(move || {
        load_model(&model_path, horizon, Some(frame_period_s))
            .map(|(factory, _)| factory)
            .map_err(|e| format!("{e:#}"))
    });
    let config = BridgeConfig {
        max_frame_bytes: args.max_frame_bytes,
        hard_frame_bytes: args.max_frame_bytes.saturating_mul(4),
        max_connections: args.max_connections,
        handshake_timeout: Duration::from_secs_f64(args.handshake_timeout_s),
        token,
        monitor: MonitorConfig {
            n_workers: args.workers,
            assembler,
            map,
            enforce: EnforceConfig {
                threshold: args.threshold.unwrap_or(DEFAULT_THRESHOLD),
                use_calibrated: args.threshold.is_none(),
                hysteresis: args.hysteresis,
                horizon_s: args.horizon,
                action: match args.mode {
                    Mode::SlowDown => Action::SlowDown,
                    Mode::Stop => Action::Stop,
                    Mode::Alert => Action::Alert,
                },
                decel_mps2: args.decel_mps2,
                brake_check_s: args.brake_check,
                collision_hold_s: args.collision_hold,
                ..EnforceConfig::default()
            },
            control_command: args.control_command,
            ..MonitorConfig::default()
        },
        log_path: args.log.clone(),
        reload: Some(reload),
        record: args.record.clone().map(|path| RecordConfig {
            path,
            frame_period_s,
            fsync: args.fsync,
        }),
        metrics_interval: (args.metrics_every_s > 0.0)
            .then(|| Duration::from_secs_f64(args.metrics_every_s)),
        fsync: args.fsync,
        ..BridgeConfig::default()
    };
    if let Some(record) = &config.record {
        // Runs a crashed bridge left unfinished (`NAME.h5.partial`): recovered or reported, never silent.
        for found in bridge::record::recover(record) {
            match found {
                bridge::record::Recovered::Readable { path, n_frames } => eprintln!(
                    "avguard bridge: recovered a crashed recording: {} ({n_frames} frames, up to its last flush)",
                    path.display()
                ),
                bridge::record::Recovered::Unreadable { path, reason } => eprintln!(
                    "avguard bridge: a crashed recording cannot be read and is kept as it is: {}: {reason}",
                    path.display()
                ),
            }
        }
    }
    let models = Arc::new(ModelStore::new(factory));
    let report = bridge::blocking::serve_until_signal(args.listen, config, models, |addr| {
        eprintln!("avguard bridge listening on ws://{addr}/");
    })?;
    eprintln!(
        "avguard bridge stopped: {} connections, {} frames, {} interventions, {} dropped, {} rejected",
        report.connection_reasons.len(),
        report.n_frames,
        report.n_interventions,
        report.n_data_dropped,
        report.n_decode_errors
    );
    Ok(())
}

/// `--brake-check` and `--collision-hold`: seconds within 0..=10 (the rollout's bound,
/// `brake_check::MAX_HORIZON_S`).
fn parse_enforce_seconds(text: &str) -> Result<f64, String> {
    let max = bridge::enforce::brake_check::MAX_HORIZON_S;
    match text.trim().parse::<f64>() {
        Ok(v) if (0.0..=max).contains(&v) => Ok(v),
        _ => Err(format!("'{text}' is not a time from 0 to {max} s")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_enforce_seconds;

    #[test]
    fn enforcement_times_are_seconds_from_0_to_10() {
        assert_eq!(parse_enforce_seconds("3"), Ok(3.0));
        assert_eq!(parse_enforce_seconds(" 0 "), Ok(0.0));
        assert_eq!(parse_enforce_seconds("10"), Ok(10.0));
        for bad in ["-1", "10.5", "NaN", "inf", "3s", ""] {
            let err = parse_enforce_seconds(bad).unwrap_err();
            assert!(err.contains("is not a time from 0 to 10 s"), "{bad}: {err}");
        }
    }
}
