//! One simulator connection: the websocket handshake, then one loop that races incoming frames, outbound
//! monitor results and cancellation, and ends with a [`ShutdownReason`].
//!
//! Text frames are rosbridge ops ([`crate::rosbridge`]); binary frames are protobuf envelopes. Every bad
//! input (malformed JSON, unknown op or topic, wrong types, protobuf garbage, NaN where a number is needed,
//! a frame above the soft size limit) is answered with a `status` error and the connection goes on. A message
//! that cannot be read past (above the hard size limit, or a text frame that is not UTF-8) closes the
//! connection with a close frame that says why. Errors are handled here, once: expected disconnects are not logged as errors.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use futures_util::{FutureExt, SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::error::CapacityError;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;

use crate::config::BridgeConfig;
use crate::control_command::CONTROL_COMMAND_TOPIC;
use crate::pipeline::{ConnLink, ModelStore, MonitorHandle, OutTopic, Outbound};
use crate::rosbridge::{self, Op, StatusLevel};
use crate::shutdown::ShutdownReason;
use crate::topics::{ADMIN_TOPIC, INTERVENTION_TOPIC, RISK_TOPIC};
use ingest::message::{Channel, Payload, SimMessage};

/// What every connection task shares.
pub struct ConnCtx {
    /// The monitor stage.
    pub monitor: MonitorHandle,
    /// The swappable model.
    pub models: Arc<ModelStore>,
    /// Settings.
    pub config: BridgeConfig,
}

/// Serves one TCP connection until it ends; returns why.
// The handshake callback's error type is fixed by tungstenite's `Callback` trait.
#[allow(clippy::result_large_err)]
pub async fn serve(
    stream: TcpStream,
    id: u64,
    ctx: Arc<ConnCtx>,
    cancel: CancellationToken,
) -> ShutdownReason {
    let token = ctx.config.token.clone();
    let check = move |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        match &token {
            Some(expected) if !expected.admits(req) => {
                let mut err = ErrorResponse::new(Some("missing or wrong token".to_owned()));
                *err.status_mut() = tokio_tungstenite::tungstenite::http::StatusCode::UNAUTHORIZED;
                Err(err)
            }
            _ => Ok(resp),
        }
    };
    let ws_config = WebSocketConfig::default()
        .max_message_size(Some(ctx.config.hard_frame_bytes))
        .max_frame_size(Some(ctx.config.hard_frame_bytes))
        .write_buffer_size(WRITE_BUFFER_BYTES)
        .max_write_buffer_size(max_write_buffer_bytes(ctx.config.max_frame_bytes));
    let handshake = tokio_tungstenite::accept_hdr_async_with_config(stream, check, Some(ws_config));
    // A socket that never completes the handshake (idle, or trickling its request) would hold its
    // connection slot for as long as it likes.
    let handshake = tokio::time::timeout(ctx.config.handshake_timeout, handshake);
    let ws = tokio::select! {
        () = cancel.cancelled() => return ShutdownReason::ServerShutdown,
        ws = handshake => match ws {
            Ok(Ok(ws)) => ws,
            Ok(Err(err)) => {
                tracing::debug!(conn = id, %err, "handshake failed");
                return ShutdownReason::HandshakeFailed;
            }
            Err(_) => {
                tracing::debug!(conn = id, "handshake timed out");
                return ShutdownReason::HandshakeTimeout;
            }
        },
    };
    let (link, out_rx) = ConnLink::new(
        id,
        ctx.config.outbound_capacity,
        ctx.config.monitor.data_capacity,
    );
    let mut conn = Conn {
        ws,
        link,
        ctx,
        subscribed: HashSet::new(),
        binary_client: false,
        status_level: StatusLevel::Info,
        burst: Vec::with_capacity(MAX_OUT_BATCH),
        inbox: Vec::with_capacity(MAX_IN_BATCH),
    };
    let reason = conn.run(out_rx, &cancel).await;
    conn.ctx.monitor.close(&conn.link);
    reason
}

struct Conn {
    ws: WebSocketStream<TcpStream>,
    link: Arc<ConnLink>,
    ctx: Arc<ConnCtx>,
    subscribed: HashSet<OutTopic>,
    /// The client has sent binary envelopes: it gets `/apollo/control` as a binary envelope too.
    binary_client: bool,
    /// The least severe `status` the client wants (`set_level`; every status until it says otherwise).
    status_level: StatusLevel,
    /// Queue times of the results in the current outbound burst (reused buffer).
    burst: Vec<std::time::Instant>,
    /// Messages decoded from the current inbound burst, handed to the monitor together (reused buffer).
    inbox: Vec<SimMessage>,
}

/// Most inbound frames handled before their messages are handed to the monitor (see
/// [`Conn::handle_burst`]).
const MAX_IN_BATCH: usize = 64;

/// Most monitor results written per flush (see [`Conn::forward_burst`]).
const MAX_OUT_BATCH: usize = 64;

/// Bytes buffered for the client before tungstenite writes them to the socket (its default).
const WRITE_BUFFER_BYTES: usize = 128 * 1024;

/// The most bytes a connection may hold for a client that does not read them: the write buffer, the
/// largest reply (one that echoes a whole frame of `max_frame_bytes`; status texts are clipped, see
/// [`rosbridge::status`]) and room for pongs. Beyond it tungstenite refuses to buffer more: a pong it owes
/// is kept as one (the latest replaces the earlier), and a send fails and closes the connection as too
/// slow. Without this cap a client that sends pings and never reads grows the buffer without limit.
fn max_write_buffer_bytes(max_frame_bytes: usize) -> usize {
    WRITE_BUFFER_BYTES
        .saturating_add(max_frame_bytes)
        .saturating_add(64 * 1024)
}

/// The outcome of sending to the client.
type Sent = Result<(), ShutdownReason>;

impl Conn {
    async fn run(
        &mut self,
        mut out_rx: tokio::sync::mpsc::Receiver<Outbound>,
        cancel: &CancellationToken,
    ) -> ShutdownReason {
        loop {
            let step: Sent = tokio::select! {
                () = cancel.cancelled() => {
                    let reason = if self.ctx.monitor.is_quitting() {
                        ShutdownReason::MonitorGone
                    } else {
                        ShutdownReason::ServerShutdown
                    };
                    return self.close(CloseCode::Away, "avguard bridge shutting down", reason).await;
                }
                out = out_rx.recv() => match out {
                    Some(out) => self.forward_burst(out, &mut out_rx).await,
                    // The link holds a sender, so the queue cannot close while we run.
                    None => Err(ShutdownReason::MonitorGone),
                },
                incoming = self.ws.next() => match incoming {
                    None | Some(Ok(Message::Close(_))) => return ShutdownReason::ClientClosed,
                    Some(Ok(msg)) => self.handle_burst(msg).await,
                    Some(Err(err)) => return self.read_failed(err).await,
                },
            };
            if let Err(reason) = step {
                return reason;
            }
            if self.link.overflowed.load(Ordering::SeqCst) {
                return self
                    .close(
                        CloseCode::Policy,
                        "client too slow: interventions backed up",
                        ShutdownReason::SlowClient,
                    )
                    .await;
            }
        }
    }

    async fn close(
        &mut self,
        code: CloseCode,
        why: &str,
        reason: ShutdownReason,
    ) -> ShutdownReason {
        let frame = CloseFrame {
            code,
            reason: clip_close_reason(why).into(),
        };
        // The client may already be gone; closing is best effort, bounded by the send timeout.
        let _ =
            tokio::time::timeout(self.ctx.config.send_timeout, self.ws.close(Some(frame))).await;
        reason
    }

    async fn send_text(&mut self, text: String) -> Sent {
        match tokio::time::timeout(
            self.ctx.config.send_timeout,
            self.ws.send(Message::text(text)),
        )
        .await
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => Err(classify(&err)),
            Err(_) => Err(ShutdownReason::SlowClient),
        }
    }

    /// Sends a `status` of `level`, unless the client's `set_level` asked for less.
    async fn status(
        &mut self,
        level: StatusLevel,
        id: Option<&serde_json::Value>,
        msg: &str,
    ) -> Sent {
        if level < self.status_level {
            return Ok(());
        }
        self.send_text(rosbridge::status(level, id, msg)).await
    }

    /// Sends a burst of monitor results: `first`, then whatever else is already queued (up to
    /// [`MAX_OUT_BATCH`]), written into tungstenite's buffer and flushed to the socket once. On a busy
    /// connection this turns one `send` syscall per result into one per burst; on a quiet one the burst is
    /// a single result and nothing changes. The whole burst shares one `send_timeout`.
    async fn forward_burst(
        &mut self,
        first: Outbound,
        out_rx: &mut tokio::sync::mpsc::Receiver<Outbound>,
    ) -> Sent {
        self.burst.clear();
        let timeout = self.ctx.config.send_timeout;
        let result = tokio::time::timeout(timeout, async {
            let mut pending = self.feed_out(first).await?;
            while self.burst.len() < MAX_OUT_BATCH {
                let Ok(out) = out_rx.try_recv() else { break };
                pending |= self.feed_out(out).await?;
            }
            if pending {
                self.ws.flush().await?;
            }
            Ok::<(), WsError>(())
        })
        .await;
        let metrics = self.ctx.monitor.metrics();
        for queued in &self.burst {
            metrics.outbound_wait.record(queued.elapsed());
        }
        match result {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => Err(classify(&err)),
            Err(_) => Err(ShutdownReason::SlowClient),
        }
    }

    /// Writes one monitor result into the websocket buffer without flushing: JSON to subscribers of its
    /// topic; an Apollo `ControlCommand` also (or only) as a binary envelope to clients that speak binary.
    /// Returns whether anything was written.
    async fn feed_out(&mut self, out: Outbound) -> Result<bool, WsError> {
        self.burst.push(out.queued);
        if self.subscribed.contains(&out.topic) {
            let text = rosbridge::publish(out_topic_name(out.topic), &out.msg_json);
            self.ws.feed(Message::text(text)).await?;
            return Ok(true);
        }
        match out.binary {
            Some(bytes) if self.binary_client => {
                self.ws.feed(Message::binary(bytes)).await?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Handles `first` and then every frame already received and buffered (up to [`MAX_IN_BATCH`]),
    /// without waiting for more, and hands the decoded messages to the monitor in one go. A worker that
    /// is asleep is then woken once per burst instead of once per message. The client closing, or a
    /// socket error, in the middle of a burst ends the connection after the messages before it are
    /// handed on.
    async fn handle_burst(&mut self, first: Message) -> Sent {
        let mut result = self.handle(first).await;
        let mut failed = None;
        let mut n = 1;
        while result.is_ok() && failed.is_none() && n < MAX_IN_BATCH {
            match self.ws.next().now_or_never() {
                None => break,
                Some(None | Some(Ok(Message::Close(_)))) => {
                    result = Err(ShutdownReason::ClientClosed)
                }
                Some(Some(Ok(msg))) => result = self.handle(msg).await,
                Some(Some(Err(err))) => failed = Some(err),
            }
            n += 1;
        }
        self.ctx.monitor.send_all(&self.link, &mut self.inbox);
        match failed {
            Some(err) => Err(self.read_failed(err).await),
            None => result,
        }
    }

    /// Ends the connection after a read that cannot go on. A message beyond the hard size limit
    /// ([`BridgeConfig::hard_frame_bytes`]; tungstenite reads no further once a frame header announces it)
    /// is answered with a close frame, code 1009 (message too big) and a reason naming its size and the
    /// limit; a text frame that is not UTF-8 with code 1007 (invalid payload) and the position of the bad
    /// bytes. Both are counted as rejected; any other error ends the connection as it is.
    async fn read_failed(&mut self, err: WsError) -> ShutdownReason {
        let (code, why) = match &err {
            WsError::Capacity(CapacityError::MessageTooLong { size, max_size }) => (
                CloseCode::Size,
                format!("message of {size} bytes is over the hard limit of {max_size} bytes"),
            ),
            // tungstenite hands out no bytes of such a frame and reads no further (RFC 6455: close, 1007).
            WsError::Utf8(why) => (
                CloseCode::Invalid,
                format!("text frame is not valid UTF-8: {why}"),
            ),
            _ => return classify(&err),
        };
        tracing::debug!(conn = self.link.id, %err, "closing after a bad message");
        self.count_rejected();
        let reason = self.close(code, &why, ShutdownReason::ProtocolError).await;
        self.linger().await;
        reason
    }

    /// After a close frame sent in the middle of the client's message: ends our side of the stream, then
    /// reads and discards what the client still sends until it closes (within the send timeout), so that
    /// the client reads the close frame instead of a reset (closing a socket with unread bytes resets it,
    /// and a client still writing a message too big would see only the reset).
    async fn linger(&mut self) {
        let stream = self.ws.get_mut();
        let _ = tokio::time::timeout(self.ctx.config.send_timeout, async {
            let _ = stream.shutdown().await;
            let mut discard = vec![0u8; 16 * 1024];
            while matches!(stream.read(&mut discard).await, Ok(n) if n > 0) {}
        })
        .await;
    }

    /// Decodes one frame into [`Conn::inbox`], or answers it with a `status` error.
    async fn handle(&mut self, msg: Message) -> Sent {
        let limit = self.ctx.config.max_frame_bytes;
        match msg {
            Message::Text(text) => {
                if text.len() > limit {
                    return self
                        .reject(
                            None,
                            &format!(
                                "frame of {} bytes exceeds the {limit}-byte limit",
                                text.len()
                            ),
                        )
                        .await;
                }
                for (id, op) in Op::parse_frame(text.as_str()) {
                    match op {
                        Ok(op) => self.handle_op(op).await?,
                        Err(err) => self.reject(id.as_ref(), &err.to_string()).await?,
                    }
                }
                Ok(())
            }
            Message::Binary(bytes) => {
                if bytes.len() > limit {
                    return self
                        .reject(
                            None,
                            &format!(
                                "frame of {} bytes exceeds the {limit}-byte limit",
                                bytes.len()
                            ),
                        )
                        .await;
                }
                if bytes.is_empty() {
                    return self
                        .reject(
                            None,
                            "empty binary frame: expected a protobuf envelope {string channel = 1; bytes payload = 2;}",
                        )
                        .await;
                }
                self.binary_client = true;
                let started = std::time::Instant::now();
                match SimMessage::decode_envelope(&bytes) {
                    Ok(msg) => {
                        self.ctx.monitor.metrics().decode.record(started.elapsed());
                        self.inbox.push(msg);
                        Ok(())
                    }
                    Err(err) => self.reject(None, &err.to_string()).await,
                }
            }
            // Pings are answered by tungstenite; pongs and raw frames need nothing.
            _ => Ok(()),
        }
    }

    /// Counts a bad message, in the bridge's metrics and the connection's own count.
    fn count_rejected(&self) {
        self.ctx
            .monitor
            .metrics()
            .n_decode_errors
            .fetch_add(1, Ordering::Relaxed);
        self.link.n_rejected.fetch_add(1, Ordering::Relaxed);
    }

    async fn reject(&mut self, id: Option<&serde_json::Value>, why: &str) -> Sent {
        self.count_rejected();
        self.status(StatusLevel::Error, id, why).await
    }

    async fn handle_op(&mut self, op: Op) -> Sent {
        match op {
            Op::Publish { id, topic, msg } => {
                if topic == ADMIN_TOPIC {
                    return self.admin(id.as_ref(), &msg).await;
                }
                let started = std::time::Instant::now();
                match SimMessage::decode(&topic, Payload::Json(&msg)) {
                    Ok(m) => {
                        self.ctx.monitor.metrics().decode.record(started.elapsed());
                        self.inbox.push(m);
                        Ok(())
                    }
                    Err(err) => self.reject(id.as_ref(), &err.to_string()).await,
                }
            }
            Op::Advertise { id, topic } => {
                if Channel::from_topic(&topic).is_some() || topic == ADMIN_TOPIC {
                    Ok(())
                } else {
                    self.reject(id.as_ref(), &format!("unknown topic {topic:?}: avguard does not consume it"))
                        .await
                }
            }
            Op::Subscribe { id, topic } => match out_topic(&topic) {
                Some(t) => {
                    if t == OutTopic::Risk {
                        self.link.wants_risk.store(true, Ordering::Relaxed);
                    }
                    self.subscribed.insert(t);
                    Ok(())
                }
                None => {
                    self.reject(id.as_ref(), &format!("unknown topic {topic:?}: avguard publishes {INTERVENTION_TOPIC}, {RISK_TOPIC} and {CONTROL_COMMAND_TOPIC}"))
                        .await
                }
            },
            Op::Unsubscribe { topic, .. } => {
                if let Some(t) = out_topic(&topic) {
                    if t == OutTopic::Risk {
                        self.link.wants_risk.store(false, Ordering::Relaxed);
                    }
                    self.subscribed.remove(&t);
                }
                Ok(())
            }
            Op::Unadvertise { .. } => Ok(()),
            Op::SetLevel { level, .. } => {
                self.status_level = level;
                Ok(())
            }
            Op::CallService { id, service, args } => {
                let (reply, ok) = rosbridge::answer_call(&service, id.as_ref(), &args);
                if !ok {
                    self.link.n_rejected.fetch_add(1, Ordering::Relaxed);
                }
                self.send_text(reply).await
            }
        }
    }

    /// Answers a request on [`ADMIN_TOPIC`].
    async fn admin(&mut self, id: Option<&serde_json::Value>, msg: &serde_json::Value) -> Sent {
        if msg.get("op").and_then(serde_json::Value::as_str) == Some("new_run") {
            return self.new_run(id, msg.get("run_id")).await;
        }
        match msg.get("command").and_then(serde_json::Value::as_str) {
            Some("reload") => {}
            Some("stats") => {
                // Messages of this burst decoded before the request count as received.
                self.ctx.monitor.send_all(&self.link, &mut self.inbox);
                let stats = self.stats();
                return self.status(StatusLevel::Info, id, &stats).await;
            }
            _ => {
                return self
                    .reject(
                        id,
                        "control: expected {\"command\": \"reload\"} or {\"command\": \"stats\"}",
                    )
                    .await
            }
        }
        let Some(reload) = self.ctx.config.reload.clone() else {
            return self
                .reject(id, "control: this bridge has no model file to reload")
                .await;
        };
        match tokio::task::spawn_blocking(move || reload()).await {
            Ok(Ok(factory)) => {
                let generation = self.ctx.models.swap(factory);
                self.status(
                    StatusLevel::Info,
                    id,
                    &format!("model reloaded (generation {generation})"),
                )
                .await
            }
            Ok(Err(err)) => self.reject(id, &format!("reload failed: {err}")).await,
            Err(_) => self.reject(id, "reload failed: the loader panicked").await,
        }
    }

    /// This connection's counters, as the JSON text of a `stats` reply: messages received (queued for the
    /// monitor), dropped (its inbound queue was full), rejected (answered with an error), waiting in its
    /// inbound queue, and risk messages dropped on the way out.
    fn stats(&self) -> String {
        let l = &self.link;
        serde_json::json!({
            "conn": l.id,
            "received": l.n_received.load(Ordering::Relaxed),
            "dropped": l.n_dropped.load(Ordering::Relaxed),
            "rejected": l.n_rejected.load(Ordering::Relaxed),
            "queued": l.inbox_len(),
            "risk_dropped": l.n_risk_dropped.load(Ordering::Relaxed),
        })
        .to_string()
    }

    /// `{"op": "new_run", "run_id": ...}`: the messages decoded so far belong to the current run, the
    /// next ones to a new run (see [`crate::run`]). `run_id` is optional: a string or a number, at most
    /// [`MAX_RUN_ID_CHARS`] characters.
    async fn new_run(
        &mut self,
        id: Option<&serde_json::Value>,
        run_id: Option<&serde_json::Value>,
    ) -> Sent {
        let run_id = match run_id {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) if s.chars().count() <= MAX_RUN_ID_CHARS => {
                Some(s.clone())
            }
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            Some(_) => {
                return self
                    .reject(
                        id,
                        &format!("control: run_id must be a string of at most {MAX_RUN_ID_CHARS} characters or a number"),
                    )
                    .await
            }
        };
        // Messages of this burst decoded before the request belong to the old run.
        self.ctx.monitor.send_all(&self.link, &mut self.inbox);
        match self.ctx.monitor.new_run(&self.link, run_id) {
            Ok(()) => Ok(()),
            Err(full) => {
                self.reject(id, &format!("control: new_run refused: {full}"))
                    .await
            }
        }
    }
}

/// Longest `run_id` accepted in a `new_run` request.
pub const MAX_RUN_ID_CHARS: usize = 128;

fn out_topic(topic: &str) -> Option<OutTopic> {
    match topic {
        INTERVENTION_TOPIC => Some(OutTopic::Intervention),
        RISK_TOPIC => Some(OutTopic::Risk),
        CONTROL_COMMAND_TOPIC => Some(OutTopic::ControlCommand),
        _ => None,
    }
}

fn out_topic_name(topic: OutTopic) -> &'static str {
    match topic {
        OutTopic::Intervention => INTERVENTION_TOPIC,
        OutTopic::Risk => RISK_TOPIC,
        OutTopic::ControlCommand => CONTROL_COMMAND_TOPIC,
    }
}

/// Longest close reason, bytes: a control frame carries at most 125 bytes, two of them the code.
const MAX_CLOSE_REASON_BYTES: usize = 123;

/// `why` cut at a character boundary to fit a close frame.
fn clip_close_reason(why: &str) -> &str {
    let mut end = why.len().min(MAX_CLOSE_REASON_BYTES);
    while !why.is_char_boundary(end) {
        end -= 1;
    }
    &why[..end]
}

/// Expected endings are not errors; anything else is logged once, here.
fn classify(err: &WsError) -> ShutdownReason {
    match err {
        WsError::ConnectionClosed | WsError::AlreadyClosed => ShutdownReason::ClientClosed,
        // The client does not read what it is sent: its write buffer is at the cap.
        WsError::WriteBufferFull(_) => ShutdownReason::SlowClient,
        WsError::Io(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::UnexpectedEof
            ) =>
        {
            ShutdownReason::ClientClosed
        }
        WsError::Protocol(_) | WsError::Capacity(_) | WsError::Utf8(_) => {
            ShutdownReason::ProtocolError
        }
        other => {
            tracing::warn!(err = %other, "connection error");
            ShutdownReason::ProtocolError
        }
    }
}
