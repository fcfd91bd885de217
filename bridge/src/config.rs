//! The bridge's settings: what `avguard bridge` flags set and every connection task reads.
//!
//! Its own module so that the accept loop ([`crate::server`]) and each connection
//! ([`crate::connection`]) both read it without either importing the other.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::auth::Token;
use crate::decide::DecideFactory;
use crate::pipeline::MonitorConfig;
use crate::record::RecordConfig;

/// Loads a new model for a reload request (control message or SIGHUP).
pub type Reloader = Arc<dyn Fn() -> Result<Box<dyn DecideFactory>, String> + Send + Sync>;

/// Bridge settings.
#[derive(Clone)]
pub struct BridgeConfig {
    /// Frames larger than this get a `status` error and are dropped, bytes.
    pub max_frame_bytes: usize,
    /// Frames beyond this close the connection (websocket "message too big"), bytes.
    pub hard_frame_bytes: usize,
    /// Simultaneous simulator connections; more are refused.
    pub max_connections: usize,
    /// Shared secret clients present as `?token=...` or `Authorization: Bearer ...`; `None` = no check
    /// (loopback use).
    pub token: Option<Token>,
    /// Capacity of each connection's outbound queue (see `ConnLink::new` for its policy).
    pub outbound_capacity: usize,
    /// A send to a client that takes longer than this closes the connection as too slow.
    pub send_timeout: Duration,
    /// A connection whose websocket handshake has not completed this long after it was accepted is
    /// closed, and its slot freed.
    pub handshake_timeout: Duration,
    /// Time connections get to close after shutdown starts.
    pub shutdown_grace: Duration,
    /// Monitor stage settings.
    pub monitor: MonitorConfig,
    /// Prediction log path.
    pub log_path: Option<PathBuf>,
    /// Reload hook for `/avguard/control` `{"command": "reload"}`.
    pub reload: Option<Reloader>,
    /// Session recording (`--record`), one HDF5 log per connection.
    pub record: Option<RecordConfig>,
    /// Period of the `bridge metrics` tracing line; `None` = only at exit.
    pub metrics_interval: Option<Duration>,
    /// Force every prediction-log line to the disk with fsync (`--fsync`; recordings: `RecordConfig::fsync`).
    pub fsync: bool,
}

impl Default for BridgeConfig {
    /// The `avguard bridge` defaults: 1 MiB frames (4 MiB closes the connection), 64 connections, no token,
    /// a 256-message outbound queue per connection, 5 s send timeout, 10 s handshake timeout, 3 s shutdown
    /// grace, no log, no
    /// recording, no reload hook.
    fn default() -> Self {
        const MAX_FRAME_BYTES: usize = 1 << 20;
        BridgeConfig {
            max_frame_bytes: MAX_FRAME_BYTES,
            hard_frame_bytes: MAX_FRAME_BYTES * 4,
            max_connections: 64,
            token: None,
            outbound_capacity: 256,
            send_timeout: Duration::from_secs(5),
            handshake_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(3),
            monitor: MonitorConfig::default(),
            log_path: None,
            reload: None,
            record: None,
            metrics_interval: None,
            fsync: false,
        }
    }
}
