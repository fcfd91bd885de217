//! Why a connection ended. Every connection task returns one; [`crate::server::run`] collects them in its
//! `RunReport`.

/// The reason a connection task stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownReason {
    /// The client sent Close or the stream ended.
    ClientClosed,
    /// The server is shutting down (signal or cancelled token).
    ServerShutdown,
    /// A websocket protocol error (including frames beyond the hard size limit).
    ProtocolError,
    /// The client did not read its interventions fast enough.
    SlowClient,
    /// The handshake failed (bad request or wrong token).
    HandshakeFailed,
    /// The handshake did not complete within the handshake timeout.
    HandshakeTimeout,
    /// The monitor stage stopped (e.g. a worker panicked).
    MonitorGone,
}
