//! Blocking entry points for the `avguard` binary, which has no async runtime of its own: each builds a
//! tokio runtime, runs the async API, and returns.
//!
//! [`serve_until_signal`] is the process-level shutdown policy: SIGINT or SIGTERM stop the bridge
//! gracefully (stop accepting, close connections with a reason, flush logs); SIGHUP reloads the model
//! through the configured [`crate::server::Reloader`] without stopping.

use std::net::SocketAddr;
use std::sync::Arc;

use scenarios::Scenario;
use tokio::net::TcpListener;

use crate::drive::{drive_run, DriveConfig, DriveError, DriveReport};
use crate::pipeline::ModelStore;
use crate::server::{self, BridgeConfig, BridgeError, RunReport};

/// Why the blocking bridge could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The runtime, listener or signal handlers could not be set up.
    #[error("{what}: {source}")]
    Io {
        /// What was being set up.
        what: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The bridge itself failed to start.
    #[error(transparent)]
    Bridge(#[from] BridgeError),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServeError {
    let what = what.into();
    move |source| ServeError::Io { what, source }
}

/// Binds `listen`, calls `on_bound` with the bound address, and serves until SIGINT or SIGTERM.
pub fn serve_until_signal(
    listen: SocketAddr,
    config: BridgeConfig,
    models: Arc<ModelStore>,
    on_bound: impl FnOnce(SocketAddr),
) -> Result<RunReport, ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io("starting the async runtime"))?;
    runtime.block_on(async move {
        let listener = TcpListener::bind(listen)
            .await
            .map_err(io(format!("binding {listen}")))?;
        let addr = listener
            .local_addr()
            .map_err(io("reading the bound address"))?;
        on_bound(addr);
        let shutdown = shutdown_signal()?;
        if let Some(reload) = config.reload.clone() {
            spawn_sighup_reload(reload, Arc::clone(&models))?;
        }
        Ok(server::run(listener, config, models, shutdown).await?)
    })
}

#[cfg(unix)]
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, ServeError> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).map_err(io("installing the SIGTERM handler"))?;
    let mut int = signal(SignalKind::interrupt()).map_err(io("installing the SIGINT handler"))?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
            _ = int.recv() => tracing::info!("SIGINT: shutting down"),
        }
    })
}

#[cfg(not(unix))]
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, ServeError> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

#[cfg(unix)]
fn spawn_sighup_reload(
    reload: server::Reloader,
    models: Arc<ModelStore>,
) -> Result<(), ServeError> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut hup = signal(SignalKind::hangup()).map_err(io("installing the SIGHUP handler"))?;
    tokio::spawn(async move {
        while hup.recv().await.is_some() {
            let reload = Arc::clone(&reload);
            match tokio::task::spawn_blocking(move || reload()).await {
                Ok(Ok(factory)) => {
                    let label = factory.label();
                    let generation = models.swap(factory);
                    tracing::info!(model = %label, generation, "SIGHUP: model reloaded");
                }
                Ok(Err(err)) => {
                    tracing::warn!(%err, "SIGHUP: reload failed; keeping the current model")
                }
                Err(_) => {
                    tracing::warn!("SIGHUP: the model loader panicked; keeping the current model")
                }
            }
        }
    });
    Ok(())
}

#[cfg(not(unix))]
fn spawn_sighup_reload(_: server::Reloader, _: Arc<ModelStore>) -> Result<(), ServeError> {
    Ok(())
}

/// Drives one run per seed, in order, each on its own connection; stops at the first failure.
pub fn drive_runs(
    config: &DriveConfig,
    scenario: &Scenario,
    seeds: &[u64],
    mut on_run: impl FnMut(usize, &DriveReport),
) -> Result<Vec<DriveReport>, DriveError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| DriveError::Ws(e.into()))?;
    runtime.block_on(async {
        let mut reports = Vec::with_capacity(seeds.len());
        for (i, seed) in seeds.iter().enumerate() {
            let report = drive_run(config, scenario, *seed).await?;
            on_run(i, &report);
            reports.push(report);
        }
        Ok(reports)
    })
}
