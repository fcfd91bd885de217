//! A [`Frame`] as the Apollo messages a simulator would publish: `LocalizationEstimate`, `Chassis`,
//! `PerceptionObstacles`, `TrafficLightDetection`, plus the `/avguard/road_context` JSON — the inverse of
//! the [`ingest::message`] decoders, so that decode(encode(frame)) assembles back into `frame`.
//!
//! Fidelity notes: the speed travels as the world-frame velocity `(v cos h, v sin h)` of the pose (f64);
//! the chassis speedometer is left out because Apollo's is an `f32` and the assembler would prefer it,
//! rounding the speed. Obstacle speeds travel the same way. Distances of "none ahead" (∞) are `null` in the
//! road context. Messages are ordered with localization last: it closes the frame's tick, so the bridge
//! steps the frame as soon as it arrives.

use laws::Frame;
use prost_reflect::DynamicMessage;
use serde_json::{json, Value};

use ingest::message::Channel;
use ingest::wire;
use ingest::wire::apollo::canbus::Chassis;
use ingest::wire::apollo::common::{Header, Point3D, PointEnu, VehicleSignal};
use ingest::wire::apollo::localization::{LocalizationEstimate, Pose};
use ingest::wire::apollo::perception::{
    PerceptionObstacle, PerceptionObstacles, TrafficLight, TrafficLightDetection,
};

#[cfg(test)]
mod tests;

/// How messages are put on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// rosbridge `publish` text frames, protobuf JSON mapping.
    Json,
    /// Binary envelopes, protobuf wire encoding (the road context as JSON bytes).
    Binary,
}

/// One encoded websocket frame.
#[derive(Debug, Clone, PartialEq)]
pub enum WsFrame {
    /// A text frame.
    Text(String),
    /// A binary frame.
    Binary(Vec<u8>),
}

fn header(t: f64) -> Option<Header> {
    Some(Header {
        timestamp_sec: Some(t),
        module_name: Some("avguard-drive".to_owned()),
        ..Default::default()
    })
}

fn vec3(x: f64, y: f64) -> Option<Point3D> {
    Some(Point3D {
        x: Some(x),
        y: Some(y),
        z: Some(0.0),
    })
}

/// The ego pose, velocity and acceleration.
pub fn localization(f: &Frame) -> LocalizationEstimate {
    let (s, c) = f.heading.sin_cos();
    LocalizationEstimate {
        header: header(f.t),
        measurement_time: Some(f.t),
        pose: Some(Pose {
            position: Some(PointEnu {
                x: Some(f.x),
                y: Some(f.y),
                z: Some(f.z),
            }),
            heading: Some(f.heading),
            linear_velocity: vec3(f.speed_mps * c, f.speed_mps * s),
            linear_acceleration: vec3(f.accel_mps2 * c, f.accel_mps2 * s),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Gear, pedals, steering and signals (no speedometer: see the module docs).
pub fn chassis(f: &Frame) -> Chassis {
    Chassis {
        header: header(f.t),
        gear_location: Some(f.gear),
        throttle_percentage: Some(f.throttle_pct),
        brake_percentage: Some(f.brake_pct),
        steering_percentage: Some(f.steering_pct),
        signal: Some(VehicleSignal {
            turn_signal: Some(f.turn_signal),
            high_beam: Some(f.high_beam),
            low_beam: Some(f.low_beam),
            horn: Some(f.horn),
            emergency_light: Some(f.hazard),
        }),
        ..Default::default()
    }
}

/// The other road users.
pub fn obstacles(f: &Frame) -> PerceptionObstacles {
    PerceptionObstacles {
        header: header(f.t),
        perception_obstacle: f
            .obstacles
            .iter()
            .map(|o| {
                let (s, c) = o.heading.sin_cos();
                PerceptionObstacle {
                    id: Some(o.id),
                    position: vec3(o.x, o.y),
                    theta: Some(o.heading),
                    velocity: vec3(o.speed_mps * c, o.speed_mps * s),
                    length: Some(o.length),
                    width: Some(o.width),
                    r#type: Some(o.kind),
                    ..Default::default()
                }
            })
            .collect(),
        ..Default::default()
    }
}

/// The governing light as the only detection (none when the frame has no light).
pub fn traffic_lights(f: &Frame) -> TrafficLightDetection {
    let lights = if f.light_color == 0 {
        Vec::new()
    } else {
        vec![TrafficLight {
            color: Some(f.light_color),
            id: Some("ego_lane".to_owned()),
            blink: Some(f.light_blink),
            ..Default::default()
        }]
    };
    TrafficLightDetection {
        header: header(f.t),
        contain_lights: Some(!lights.is_empty()),
        traffic_light: lights,
        ..Default::default()
    }
}

fn dist(d: f64) -> Value {
    if d.is_finite() {
        json!(d)
    } else {
        Value::Null
    }
}

/// The road fields, collision flag and right of way (`/avguard/road_context`).
pub fn road_context(f: &Frame) -> Value {
    let priority: Vec<i32> = f
        .obstacles
        .iter()
        .filter(|o| o.priority)
        .map(|o| o.id)
        .collect();
    json!({
        "stamp": f.t,
        "stopline_dist": dist(f.stopline_dist_m),
        "junction_dist": dist(f.junction_dist_m),
        "crosswalk_dist": dist(f.crosswalk_dist_m),
        "stopsign_dist": dist(f.stopsign_dist_m),
        "speed_limit": dist(f.speed_limit_mps),
        "lane_number": f.lane_number,
        "planned_turn": f.planned_turn,
        "signal_ahead": f.signal_ahead,
        "traffic_jam": f.traffic_jam,
        "light_color": f.light_color,
        "light_blink": f.light_blink,
        "destination": f.destination,
        "collision": f.collision,
        "priority": priority,
    })
}

/// Every message of one frame, localization last, in `encoding`.
pub fn encode_frame(f: &Frame, encoding: Encoding) -> Vec<WsFrame> {
    let road = road_context(f);
    let mut out = Vec::with_capacity(5);
    match encoding {
        Encoding::Json => {
            out.push(publish(Channel::RoadContext, road));
            out.push(publish(
                Channel::Chassis,
                proto_json(Channel::Chassis, &chassis(f)),
            ));
            out.push(publish(
                Channel::Obstacles,
                proto_json(Channel::Obstacles, &obstacles(f)),
            ));
            out.push(publish(
                Channel::TrafficLights,
                proto_json(Channel::TrafficLights, &traffic_lights(f)),
            ));
            out.push(publish(
                Channel::Localization,
                proto_json(Channel::Localization, &localization(f)),
            ));
        }
        Encoding::Binary => {
            out.push(envelope(
                Channel::RoadContext,
                road.to_string().into_bytes(),
            ));
            out.push(envelope(Channel::Chassis, proto_bytes(&chassis(f))));
            out.push(envelope(Channel::Obstacles, proto_bytes(&obstacles(f))));
            out.push(envelope(
                Channel::TrafficLights,
                proto_bytes(&traffic_lights(f)),
            ));
            out.push(envelope(
                Channel::Localization,
                proto_bytes(&localization(f)),
            ));
        }
    }
    out
}

fn publish(channel: Channel, msg: Value) -> WsFrame {
    WsFrame::Text(json!({"op": "publish", "topic": channel.topic(), "msg": msg}).to_string())
}

fn envelope(channel: Channel, payload: Vec<u8>) -> WsFrame {
    WsFrame::Binary(proto_bytes(&wire::Envelope {
        channel: channel.topic().to_owned(),
        payload,
    }))
}

fn proto_bytes<M: prost::Message>(m: &M) -> Vec<u8> {
    m.encode_to_vec()
}

/// The protobuf JSON mapping of `m` (lowerCamelCase), through the embedded descriptors.
fn proto_json<M: prost::Message>(channel: Channel, m: &M) -> Value {
    channel
        .proto_type()
        .and_then(wire::descriptor)
        .and_then(|desc| {
            let mut dynamic = DynamicMessage::new(desc);
            dynamic.transcode_from(m).ok()?;
            serde_json::to_value(&dynamic).ok()
        })
        // The descriptors are built from the same .proto files as the prost types (tests cover every
        // encoded type), so this fallback is unreachable in practice; an empty object then fails loudly
        // at the bridge as a `status` error rather than here.
        .unwrap_or_else(|| json!({}))
}
