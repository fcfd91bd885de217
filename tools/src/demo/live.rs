//! The demo's live half: the learned model served by an in-process bridge on a free loopback port, and
//! held-out runs driven through it over real websockets by the scenario generator acting as simulator.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bridge::config::BridgeConfig;
use bridge::drive::{DriveConfig, DriveReport, Encoding};
use bridge::enforce::EnforceConfig;
use bridge::pipeline::{ModelStore, MonitorConfig};
use bridge::session::MonitorFactory;
use futures_util::stream::{self, StreamExt};
use monitor::Model;
use scenarios::Scenario;

/// Runs driven at once: each run is lock-step (one frame, one reply), so a few in flight keep both the
/// clients and the monitor threads busy.
const RUNS_IN_FLIGHT: usize = 4;

/// A bridge serving one model until dropped.
pub struct LiveBridge {
    runtime: tokio::runtime::Runtime,
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<
        tokio::task::JoinHandle<Result<bridge::server::RunReport, bridge::server::BridgeError>>,
    >,
}

impl LiveBridge {
    /// Starts a bridge for `model` on 127.0.0.1 (port chosen by the system), enforcing at `threshold` (or,
    /// for `None`, at each property's calibrated θ and debounce, [`super::UNCALIBRATED_THRESHOLD`] where
    /// there is none) with slow-down interventions, and writing its prediction log to `log`.
    pub fn start(model: Model, threshold: Option<f64>, log: &Path) -> anyhow::Result<LiveBridge> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        let factory = MonitorFactory::new(model, None, "demo model".into())?;
        let models = Arc::new(ModelStore::new(Box::new(factory)));
        let config = BridgeConfig {
            monitor: MonitorConfig {
                enforce: EnforceConfig {
                    threshold: threshold.unwrap_or(super::UNCALIBRATED_THRESHOLD),
                    use_calibrated: threshold.is_none(),
                    ..EnforceConfig::default()
                },
                ..MonitorConfig::default()
            },
            log_path: Some(log.to_path_buf()),
            ..BridgeConfig::default()
        };
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .context("cannot bind a loopback port")?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = runtime.spawn(bridge::server::run(listener, config, models, async move {
            // A dropped sender also means "stop".
            let _ = stopped.await;
        }));
        Ok(LiveBridge {
            runtime,
            addr,
            stop: Some(stop),
            server: Some(server),
        })
    }

    /// The websocket URL of the bridge.
    pub fn url(&self) -> String {
        format!("ws://{}/", self.addr)
    }

    /// Drives `seeds` of each scenario through the bridge; `obey` applies the interventions.
    pub fn drive(
        &self,
        jobs: &[(usize, u64)],
        scenarios: &[Scenario],
        obey: bool,
        what: &str,
    ) -> anyhow::Result<Vec<(usize, DriveReport)>> {
        let config = DriveConfig {
            url: self.url(),
            encoding: Encoding::Binary,
            obey,
            reply_timeout: Duration::from_secs(10),
        };
        let progress = crate::progress::bar(jobs.len() as u64, what);
        let results: Vec<anyhow::Result<(usize, DriveReport)>> = self.runtime.block_on(
            stream::iter(jobs.iter().copied())
                .map(|(s, seed)| {
                    let config = config.clone();
                    let progress = progress.clone();
                    async move {
                        let report = bridge::drive::drive_run(&config, &scenarios[s], seed)
                            .await
                            .with_context(|| {
                                format!("{} run with seed {seed}", scenarios[s].name())
                            })?;
                        progress.inc(1);
                        Ok((s, report))
                    }
                })
                .buffered(RUNS_IN_FLIGHT)
                .collect(),
        );
        progress.finish_and_clear();
        results.into_iter().collect()
    }

    /// Stops the bridge and waits for it (connections closed, prediction log flushed).
    pub fn stop(mut self) -> anyhow::Result<bridge::server::RunReport> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let server = self.server.take().context("bridge already stopped")?;
        let report = self
            .runtime
            .block_on(server)
            .context("the bridge task failed")??;
        Ok(report)
    }
}
