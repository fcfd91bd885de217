//! `avguard drive` as a library: the scenario generator acting as a simulator client of the bridge.
//!
//! [`drive_run`] opens one websocket connection per run (so each run gets fresh window state in the
//! bridge), subscribes to `/avguard/intervention` and `/avguard/risk`, and then, in lock-step:
//! steps the [`Simulation`] once, publishes the frame as Apollo messages ([`encode`]), and waits for the
//! bridge's risk reply for that frame before stepping again. The monitor queues a frame's interventions
//! before its risk message, so by the time the reply arrives every intervention for the frame has been
//! applied: `slow_down` caps the speed at its target, `stop` at 0, `clear` lifts the property's cap (the
//! tightest active cap wins). Lock-step makes a run a pure function of (scenario, seed, bridge model).
//!
//! The bridge's frame period must equal the scenario's (0.1 s for every shipped scenario): the reply is
//! matched on the frame time.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use laws::{EvalConfig, Evaluator, Frame, LawSet, SignalStream};
use scenarios::{Command, Scenario, Simulation};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

use crate::topics::{INTERVENTION_TOPIC, RISK_TOPIC};

pub mod encode;

pub use encode::Encoding;

#[cfg(test)]
mod tests;

/// Drive settings.
#[derive(Debug, Clone)]
pub struct DriveConfig {
    /// The bridge, e.g. `ws://127.0.0.1:9090/` (append `?token=...` when the bridge wants one).
    pub url: String,
    /// JSON (rosbridge) or binary envelopes.
    pub encoding: Encoding,
    /// Apply interventions (`false`: `--ignore-interventions`, open loop with the same messages).
    pub obey: bool,
    /// Longest wait for a frame's risk reply.
    pub reply_timeout: Duration,
}

/// One risk reply.
#[derive(Debug, Clone, PartialEq)]
pub struct RiskSample {
    /// Frame time, s.
    pub stamp: f64,
    /// Risk per property.
    pub risk: BTreeMap<String, f64>,
}

/// One intervention as received.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedIntervention {
    /// Frame time, s.
    pub stamp: f64,
    /// Property.
    pub property: String,
    /// `slow_down`, `stop`, `alert` or `clear`.
    pub action: String,
    /// Target speed, m/s.
    pub target_speed_mps: Option<f64>,
    /// Risk that triggered it.
    pub probability: f64,
}

/// What one run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct DriveReport {
    /// The run's seed.
    pub seed: u64,
    /// The frames the simulator produced (and published).
    pub frames: Vec<Frame>,
    /// The risk reply of every frame, in order.
    pub risk: Vec<RiskSample>,
    /// Interventions received, in order.
    pub interventions: Vec<ReceivedIntervention>,
    /// Some frame had a collision.
    pub collision: bool,
}

impl From<tokio_tungstenite::tungstenite::Error> for DriveError {
    fn from(e: tokio_tungstenite::tungstenite::Error) -> DriveError {
        DriveError::Ws(e)
    }
}

/// Why a run could not be driven.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriveError {
    /// The websocket failed (its error in the message, so not also a `source`: error chains would say
    /// it twice, and tungstenite's own I/O error a third time).
    #[error("websocket: {0}")]
    Ws(tokio_tungstenite::tungstenite::Error),
    /// The bridge closed the connection.
    #[error("the bridge closed the connection at t = {t_s} s")]
    Closed {
        /// Frame time, s.
        t_s: f64,
    },
    /// No risk reply in time.
    #[error("no risk reply for the frame at t = {t_s} s within {timeout:?}")]
    Timeout {
        /// Frame time, s.
        t_s: f64,
        /// The configured wait.
        timeout: Duration,
    },
    /// The bridge answered a message with a `status` error.
    #[error("the bridge rejected a message: {0}")]
    Rejected(String),
}

/// Drives one run of `scenario` with `seed` through the bridge at `config.url`.
pub async fn drive_run(
    config: &DriveConfig,
    scenario: &Scenario,
    seed: u64,
) -> Result<DriveReport, DriveError> {
    // Nagle off: lock-step sends small frames and waits for the reply.
    let (mut ws, _) =
        tokio_tungstenite::connect_async_with_config(config.url.as_str(), None, true).await?;
    for topic in [INTERVENTION_TOPIC, RISK_TOPIC] {
        let op = json!({"op": "subscribe", "topic": topic, "id": format!("drive:{topic}")});
        ws.send(Message::text(op.to_string())).await?;
    }
    let mut sim = Simulation::new(scenario, seed);
    let mut report = DriveReport {
        seed,
        frames: Vec::new(),
        risk: Vec::new(),
        interventions: Vec::new(),
        collision: false,
    };
    // Active speed caps by property.
    let mut caps: BTreeMap<String, f64> = BTreeMap::new();
    loop {
        let command = Command {
            speed_cap_mps: caps.values().copied().reduce(f64::min),
        };
        let Some(frame) = sim.step(&command) else {
            break;
        };
        for out in encode::encode_frame(&frame, config.encoding) {
            let msg = match out {
                encode::WsFrame::Text(t) => Message::text(t),
                encode::WsFrame::Binary(b) => Message::binary(b),
            };
            ws.send(msg).await?;
        }
        let t_s = frame.t;
        report.collision |= frame.collision;
        report.frames.push(frame);
        let deadline = tokio::time::Instant::now() + config.reply_timeout;
        loop {
            let next = tokio::time::timeout_at(deadline, ws.next())
                .await
                .map_err(|_| DriveError::Timeout {
                    t_s,
                    timeout: config.reply_timeout,
                })?;
            let text = match next {
                None | Some(Ok(Message::Close(_))) => return Err(DriveError::Closed { t_s }),
                Some(Err(err)) => return Err(err.into()),
                Some(Ok(Message::Text(text))) => text,
                // Binary control commands and pings need nothing from the driver.
                Some(Ok(_)) => continue,
            };
            let Ok(value) = serde_json::from_str::<Value>(text.as_str()) else {
                continue;
            };
            if let Some(sample) = handle_reply(&value, config.obey, &mut caps, &mut report)? {
                if sample.stamp >= t_s - 1e-6 {
                    report.risk.push(sample);
                    break;
                }
                report.risk.push(sample);
            }
        }
    }
    // Best effort: the bridge notices a vanished client too.
    let _ = ws.close(None).await;
    Ok(report)
}

/// Applies one text reply; returns the risk sample when it is one.
fn handle_reply(
    value: &Value,
    obey: bool,
    caps: &mut BTreeMap<String, f64>,
    report: &mut DriveReport,
) -> Result<Option<RiskSample>, DriveError> {
    match value.get("op").and_then(Value::as_str) {
        Some("status") if value.get("level").and_then(Value::as_str) == Some("error") => {
            let msg = value.get("msg").and_then(Value::as_str).unwrap_or("");
            Err(DriveError::Rejected(msg.to_owned()))
        }
        Some("publish") => {
            let msg = value.get("msg").unwrap_or(&Value::Null);
            match value.get("topic").and_then(Value::as_str) {
                Some(RISK_TOPIC) => Ok(Some(RiskSample {
                    stamp: msg.get("stamp").and_then(Value::as_f64).unwrap_or(f64::NAN),
                    risk: msg
                        .get("risk")
                        .and_then(Value::as_object)
                        .map(|m| {
                            m.iter()
                                .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                                .collect()
                        })
                        .unwrap_or_default(),
                })),
                Some(INTERVENTION_TOPIC) => {
                    let i = ReceivedIntervention {
                        stamp: msg.get("stamp").and_then(Value::as_f64).unwrap_or(f64::NAN),
                        property: str_field(msg, "property"),
                        action: str_field(msg, "action"),
                        target_speed_mps: msg.get("target_speed_mps").and_then(Value::as_f64),
                        probability: msg
                            .get("probability")
                            .and_then(Value::as_f64)
                            .unwrap_or(f64::NAN),
                    };
                    if obey {
                        apply(&i, caps);
                    }
                    report.interventions.push(i);
                    Ok(None)
                }
                _ => Ok(None),
            }
        }
        _ => Ok(None),
    }
}

fn str_field(msg: &Value, key: &str) -> String {
    msg.get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// Updates the active speed caps with one intervention.
pub fn apply(i: &ReceivedIntervention, caps: &mut BTreeMap<String, f64>) {
    match i.action.as_str() {
        "slow_down" => {
            if let Some(v) = i.target_speed_mps.filter(|v| v.is_finite()) {
                caps.insert(i.property.clone(), v.max(0.0));
            }
        }
        "stop" => {
            caps.insert(i.property.clone(), 0.0);
        }
        // `alert` asks for no speed: it replaces the property's earlier demand (the brake check found
        // braking worse than keeping on).
        "clear" | "alert" => {
            caps.remove(&i.property);
        }
        _ => {}
    }
}

impl DriveReport {
    /// The first violation time of every law of `laws` violated in this run, in law order.
    pub fn violations(
        &self,
        laws: &LawSet,
        frame_period_s: f64,
    ) -> Result<Vec<(String, f64)>, laws::EvalError> {
        let cfg = EvalConfig {
            frame_period_s,
            ..EvalConfig::default()
        };
        let mut eval = Evaluator::new(laws, &cfg)?;
        let mut first: Vec<Option<f64>> = vec![None; laws.laws().len()];
        let mut signals = SignalStream::new(cfg.context, eval.needed_signals());
        for frame in &self.frames {
            let verdicts = eval.step(signals.next(frame));
            for (i, slot) in first.iter_mut().enumerate() {
                if slot.is_none() && verdicts.violated_now(i) {
                    *slot = Some(frame.t);
                }
            }
        }
        Ok(laws
            .laws()
            .iter()
            .zip(first)
            .filter_map(|(law, t)| Some((law.name().to_owned(), t?)))
            .collect())
    }
}
