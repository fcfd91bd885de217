//! `/avguard/road_context`: road fields for sources without an HD map (INTERFACES §3).
//!
//! A JSON object with any of the road fields of the log format (`stopline_dist`, `junction_dist`,
//! `crosswalk_dist`, `stopsign_dist`, `speed_limit`, `lane_number`, `planned_turn`, `signal_ahead`,
//! `traffic_jam`, `light_color`, `light_blink`, `destination`), plus our extensions `collision` (the
//! simulator's overlap flag), `stamp` (message time, s) and `priority` (an object from obstacle id to bool,
//! or a list of the ids that have right of way). A field that is absent leaves the held value unchanged; a
//! distance given as `null` (JSON has no infinity) or the strings `"inf"`/`"Infinity"` means "none ahead".
//! Booleans may be given as `true`/`false` or `0`/`1`. A field of the wrong type rejects the message.

use std::collections::BTreeMap;

use laws::Frame;
use serde_json::Value;

use super::{DecodeError, Payload};

const CHANNEL: &str = "/avguard/road_context";

/// The reported road fields; `None` = not in this message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoadContextMsg {
    /// `stamp`, s.
    pub time_s: Option<f64>,
    /// Distance to the next stop line, m (∞ = none).
    pub stopline_dist_m: Option<f64>,
    /// Distance to the next junction, m.
    pub junction_dist_m: Option<f64>,
    /// Distance to the next crosswalk, m.
    pub crosswalk_dist_m: Option<f64>,
    /// Distance to the next stop-sign line, m.
    pub stopsign_dist_m: Option<f64>,
    /// Speed limit, m/s.
    pub speed_limit_mps: Option<f64>,
    /// Lanes of the ego road.
    pub lane_number: Option<i32>,
    /// Planned turn (0 straight, 1 left, 2 right).
    pub planned_turn: Option<i32>,
    /// A light governs the ego lane ahead.
    pub signal_ahead: Option<bool>,
    /// Junction ahead jammed.
    pub traffic_jam: Option<bool>,
    /// Colour of the governing light.
    pub light_color: Option<i32>,
    /// Governing light blinks.
    pub light_blink: Option<bool>,
    /// Destination reached.
    pub destination: Option<bool>,
    /// Ego overlaps another road user.
    pub collision: Option<bool>,
    /// Right of way by obstacle id.
    pub priority: Option<BTreeMap<i32, bool>>,
}

impl RoadContextMsg {
    /// Decodes the JSON object (binary payloads hold the same JSON as UTF-8 text).
    pub fn decode(payload: Payload<'_>) -> Result<Self, DecodeError> {
        let owned;
        let value = match payload {
            Payload::Json(v) => v,
            Payload::Binary(bytes) => {
                owned = serde_json::from_slice::<Value>(bytes).map_err(|e| bad(e.to_string()))?;
                &owned
            }
            Payload::Text(text) => {
                owned = serde_json::from_str::<Value>(text).map_err(|e| bad(e.to_string()))?;
                &owned
            }
        };
        let obj = value
            .as_object()
            .ok_or_else(|| bad("expected a JSON object".to_owned()))?;
        let mut msg = RoadContextMsg::default();
        for (key, v) in obj {
            match key.as_str() {
                "stamp" => msg.time_s = Some(finite_number(key, v)?),
                "stopline_dist" => msg.stopline_dist_m = Some(distance(key, v)?),
                "junction_dist" => msg.junction_dist_m = Some(distance(key, v)?),
                "crosswalk_dist" => msg.crosswalk_dist_m = Some(distance(key, v)?),
                "stopsign_dist" => msg.stopsign_dist_m = Some(distance(key, v)?),
                "speed_limit" => msg.speed_limit_mps = Some(distance(key, v)?),
                "lane_number" => msg.lane_number = Some(integer(key, v)?),
                "planned_turn" => msg.planned_turn = Some(integer(key, v)?),
                "light_color" => msg.light_color = Some(integer(key, v)?),
                "signal_ahead" => msg.signal_ahead = Some(boolean(key, v)?),
                "traffic_jam" => msg.traffic_jam = Some(boolean(key, v)?),
                "light_blink" => msg.light_blink = Some(boolean(key, v)?),
                "destination" => msg.destination = Some(boolean(key, v)?),
                "collision" => msg.collision = Some(boolean(key, v)?),
                "priority" => msg.priority = Some(priority(v)?),
                _ => {}
            }
        }
        Ok(msg)
    }

    /// Takes every field `newer` reports (a later message overrides an earlier one field by field).
    pub fn merge(&mut self, newer: &RoadContextMsg) {
        fn take<T: Clone>(dst: &mut Option<T>, src: &Option<T>) {
            if src.is_some() {
                dst.clone_from(src);
            }
        }
        take(&mut self.time_s, &newer.time_s);
        take(&mut self.stopline_dist_m, &newer.stopline_dist_m);
        take(&mut self.junction_dist_m, &newer.junction_dist_m);
        take(&mut self.crosswalk_dist_m, &newer.crosswalk_dist_m);
        take(&mut self.stopsign_dist_m, &newer.stopsign_dist_m);
        take(&mut self.speed_limit_mps, &newer.speed_limit_mps);
        take(&mut self.lane_number, &newer.lane_number);
        take(&mut self.planned_turn, &newer.planned_turn);
        take(&mut self.signal_ahead, &newer.signal_ahead);
        take(&mut self.traffic_jam, &newer.traffic_jam);
        take(&mut self.light_color, &newer.light_color);
        take(&mut self.light_blink, &newer.light_blink);
        take(&mut self.destination, &newer.destination);
        take(&mut self.collision, &newer.collision);
        take(&mut self.priority, &newer.priority);
    }

    /// Writes the reported fields into the held frame. Priorities are merged by the assembler.
    pub fn apply(&self, frame: &mut Frame) {
        let set_f = |dst: &mut f64, src: Option<f64>| {
            if let Some(v) = src {
                *dst = v;
            }
        };
        set_f(&mut frame.stopline_dist_m, self.stopline_dist_m);
        set_f(&mut frame.junction_dist_m, self.junction_dist_m);
        set_f(&mut frame.crosswalk_dist_m, self.crosswalk_dist_m);
        set_f(&mut frame.stopsign_dist_m, self.stopsign_dist_m);
        set_f(&mut frame.speed_limit_mps, self.speed_limit_mps);
        let set_b = |dst: &mut bool, src: Option<bool>| {
            if let Some(v) = src {
                *dst = v;
            }
        };
        set_b(&mut frame.signal_ahead, self.signal_ahead);
        set_b(&mut frame.traffic_jam, self.traffic_jam);
        set_b(&mut frame.light_blink, self.light_blink);
        set_b(&mut frame.destination, self.destination);
        set_b(&mut frame.collision, self.collision);
        if let Some(v) = self.lane_number {
            frame.lane_number = v;
        }
        if let Some(v) = self.planned_turn {
            frame.planned_turn = v;
        }
        if let Some(v) = self.light_color {
            frame.light_color = v;
        }
    }
}

fn bad(reason: String) -> DecodeError {
    DecodeError::Mapping {
        channel: CHANNEL,
        reason,
    }
}

fn finite_number(key: &str, v: &Value) -> Result<f64, DecodeError> {
    v.as_f64()
        .filter(|x| x.is_finite())
        .ok_or_else(|| bad(format!("{key}: expected a finite number")))
}

/// A non-negative distance or speed; `null`/`"inf"` = none (∞).
fn distance(key: &str, v: &Value) -> Result<f64, DecodeError> {
    let d = match v {
        Value::Null => f64::INFINITY,
        Value::String(s) if matches!(s.as_str(), "inf" | "Infinity" | "+inf") => f64::INFINITY,
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| bad(format!("{key}: not a number")))?,
        _ => return Err(bad(format!("{key}: expected a number, null or \"inf\""))),
    };
    if d.is_nan() || d < 0.0 {
        return Err(bad(format!("{key}: must be >= 0")));
    }
    Ok(d)
}

fn integer(key: &str, v: &Value) -> Result<i32, DecodeError> {
    v.as_i64()
        .and_then(|i| i32::try_from(i).ok())
        .ok_or_else(|| bad(format!("{key}: expected an integer")))
}

fn boolean(key: &str, v: &Value) -> Result<bool, DecodeError> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) if n.as_u64() == Some(0) => Ok(false),
        Value::Number(n) if n.as_u64() == Some(1) => Ok(true),
        _ => Err(bad(format!("{key}: expected a boolean or 0/1"))),
    }
}

fn priority(v: &Value) -> Result<BTreeMap<i32, bool>, DecodeError> {
    let n = match v {
        Value::Object(map) => map.len(),
        Value::Array(ids) => ids.len(),
        _ => 0,
    };
    if n > laws::frame::MAX_OBSTACLES {
        return Err(bad(format!(
            "priority: {n} entries, more than the limit of {} obstacles",
            laws::frame::MAX_OBSTACLES
        )));
    }
    match v {
        Value::Object(map) => map
            .iter()
            .map(|(id, flag)| {
                let id = id
                    .parse::<i32>()
                    .map_err(|_| bad(format!("priority: {id:?} is not an obstacle id")))?;
                Ok((id, boolean("priority", flag)?))
            })
            .collect(),
        Value::Array(ids) => ids
            .iter()
            .map(|id| Ok((integer("priority", id)?, true)))
            .collect(),
        _ => Err(bad(
            "priority: expected an object or a list of ids".to_owned()
        )),
    }
}
