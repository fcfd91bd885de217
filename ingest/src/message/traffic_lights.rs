//! `/apollo/perception/traffic_light` (`TrafficLightDetection`): detected light colours.
//!
//! Which light governs the ego lane needs an HD map. With one, every detected light is kept and the
//! map's governing signal is looked up by id ([`crate::hdmap::context`]). Without one the rule is: when
//! `/avguard/road_context` has given a `light_color`, that wins (the assembler enforces it); otherwise the
//! first light of the latest detection is taken as the governing one, and an empty detection means "no
//! light" (colour 0).

use laws::Frame;

use super::{finite, DecodeError};
use crate::hdmap::context::LightObservation;
use crate::wire::apollo::perception::TrafficLightDetection;

/// The first detected light of a `TrafficLightDetection`.
#[derive(Debug, Clone, PartialEq)]
pub struct TrafficLightsMsg {
    /// Header time, s.
    pub time_s: Option<f64>,
    /// Apollo `TrafficLight.Color` of the first light, 0 when none.
    pub color: i32,
    /// Whether that light blinks.
    pub blink: bool,
    /// The map signal id of that light, when any.
    pub id: Option<String>,
    /// Number of lights in the detection.
    pub n_lights: usize,
    /// Every detected light that carries a signal id.
    pub lights: Vec<LightObservation>,
}

impl TrafficLightsMsg {
    /// Converts the wire message.
    pub fn from_proto(msg: TrafficLightDetection) -> Result<Self, DecodeError> {
        let time_s = msg
            .header
            .as_ref()
            .and_then(|h| h.timestamp_sec)
            .and_then(finite);
        let first = msg.traffic_light.first();
        Ok(TrafficLightsMsg {
            time_s,
            color: first.and_then(|l| l.color).unwrap_or(0),
            blink: first.is_some_and(|l| l.blink()),
            id: first.and_then(|l| l.id.clone()),
            n_lights: msg.traffic_light.len(),
            lights: msg
                .traffic_light
                .iter()
                .filter_map(|l| {
                    Some(LightObservation {
                        id: l.id.clone()?,
                        color: l.color.unwrap_or(0),
                        blink: l.blink(),
                    })
                })
                .collect(),
        })
    }

    /// Writes the light into the held frame (the assembler skips this when the road context rules).
    pub fn apply(&self, frame: &mut Frame) {
        frame.light_color = self.color;
        frame.light_blink = self.blink;
    }
}
