//! The optional Apollo `ControlCommand` that accompanies a `slow_down` or `stop` intervention
//! (`avguard bridge --control-command`), published on `/apollo/control`.
//!
//! The command sets throttle 0 and a brake percentage that achieves a target deceleration. Brake mapping
//! (an assumption, since the real pedal-to-deceleration curve is vehicle-specific and Apollo's own lives in
//! its calibration table): **linear**, `brake_pct = 100 · a / MAX_DECEL_MPS2` clamped to 0..100, with
//! `MAX_DECEL_MPS2 = 8` m/s² at full brake (dry asphalt, a passenger car's emergency stop).
//!
//! Target deceleration:
//! - `slow_down`: the enforcement deceleration (`EnforceConfig::decel_mps2`) when the target speed is
//!   below the current speed — the target speed was chosen so that braking at exactly that rate still
//!   meets the stop line — else 0 (coast: throttle 0, no brake);
//! - `stop`: enough to stop before the nearest stop feature ahead, `v² / (2 · room)` with
//!   `room = distance − stop margin`, but never less than the enforcement deceleration; with nothing ahead,
//!   the enforcement deceleration.
//!
//! `alert` and `clear` send no command (the vehicle's own controller is back in charge).

use laws::Frame;
use prost_reflect::DynamicMessage;

use crate::enforce::{Action, EnforceConfig, Intervention};
use ingest::wire;
use ingest::wire::apollo::common::Header;
use ingest::wire::apollo::control::ControlCommand;

#[cfg(test)]
mod tests;

/// The topic of the command.
pub const CONTROL_COMMAND_TOPIC: &str = "/apollo/control";

/// Deceleration at 100 % brake in the linear mapping, m/s².
pub const MAX_DECEL_MPS2: f64 = 8.0;

/// Brake percentage that achieves `decel_mps2` under the linear mapping (0..=100).
pub fn brake_pct_for(decel_mps2: f64) -> f64 {
    if !decel_mps2.is_finite() {
        return if decel_mps2 > 0.0 { 100.0 } else { 0.0 };
    }
    (100.0 * decel_mps2 / MAX_DECEL_MPS2).clamp(0.0, 100.0)
}

/// The deceleration the command asks for (see the module docs), m/s²; `None` for `alert`/`clear`.
pub fn target_decel_mps2(frame: &Frame, i: &Intervention, config: &EnforceConfig) -> Option<f64> {
    let v = frame.speed_mps.max(0.0);
    let base = config.decel_mps2.max(0.0);
    match i.action {
        Action::Alert | Action::Clear => None,
        Action::SlowDown => Some(match i.target_speed_mps {
            Some(target) if target < v => base,
            _ => 0.0,
        }),
        Action::Stop => {
            let nearest_m = crate::enforce::nearest_stop_point_m(frame);
            if !nearest_m.is_finite() {
                return Some(base);
            }
            // At least 0.1 m of room: at the line itself the command is a full stop.
            let room_m = (nearest_m - config.stop_margin_m).max(0.1);
            Some((v * v / (2.0 * room_m)).max(base))
        }
    }
}

/// The `ControlCommand` for an intervention, or `None` when the action sends none.
pub fn control_command(
    frame: &Frame,
    i: &Intervention,
    config: &EnforceConfig,
) -> Option<ControlCommand> {
    let decel = target_decel_mps2(frame, i, config)?;
    Some(ControlCommand {
        header: Some(Header {
            timestamp_sec: Some(frame.t),
            module_name: Some("avguard".to_owned()),
            ..Default::default()
        }),
        throttle: Some(0.0),
        brake: Some(brake_pct_for(decel)),
        speed: i.target_speed_mps,
        acceleration: Some(-decel),
        ..Default::default()
    })
}

/// The command in the protobuf JSON mapping (lowerCamelCase), for JSON subscribers.
pub fn to_json(cmd: &ControlCommand) -> Option<String> {
    let desc = wire::descriptor("apollo.control.ControlCommand")?;
    let mut dynamic = DynamicMessage::new(desc);
    dynamic.transcode_from(cmd).ok()?;
    serde_json::to_string(&dynamic).ok()
}

/// The command as a binary websocket frame: an envelope on [`CONTROL_COMMAND_TOPIC`].
pub fn to_envelope(cmd: &ControlCommand) -> Vec<u8> {
    use prost::Message as _;
    wire::Envelope {
        channel: CONTROL_COMMAND_TOPIC.to_owned(),
        payload: cmd.encode_to_vec(),
    }
    .encode_to_vec()
}
