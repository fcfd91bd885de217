//! Decoded simulator messages: the closed [`SimMessage`] enum and its one dispatch point.
//!
//! A websocket frame becomes a [`SimMessage`] in two layers: the transport layer yields a channel name plus
//! either protobuf bytes (binary envelope), a JSON object (rosbridge `publish`), or protobuf text (fixtures);
//! [`SimMessage::decode`] then matches the channel string exactly once ([`Channel::from_topic`]) and hands the
//! payload to the variant's own module, which converts the Apollo message into plain fields. Each variant's
//! file holds its conversion and how it is applied to the held [`laws::Frame`]; the tests of every variant
//! are in `message/tests.rs`.
//!
//! Absent Apollo floats default to NaN ("unknown"); the conversions treat NaN as "not reported" and never let
//! it reach a frame.

use prost_reflect::{DeserializeOptions, DynamicMessage};

use crate::wire;

pub mod chassis;
pub mod localization;
pub mod obstacles;
pub mod road_context;
pub mod routing;
pub mod traffic_lights;

#[cfg(test)]
mod tests;

pub use chassis::ChassisMsg;
pub use localization::LocalizationMsg;
pub use obstacles::ObstaclesMsg;
pub use road_context::RoadContextMsg;
pub use routing::RoutingMsg;
pub use traffic_lights::TrafficLightsMsg;

/// The channels the bridge consumes (INTERFACES §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    /// `/apollo/localization/pose`, `apollo.localization.LocalizationEstimate`.
    Localization,
    /// `/apollo/canbus/chassis`, `apollo.canbus.Chassis`.
    Chassis,
    /// `/apollo/perception/obstacles`, `apollo.perception.PerceptionObstacles`.
    Obstacles,
    /// `/apollo/perception/traffic_light`, `apollo.perception.TrafficLightDetection`.
    TrafficLights,
    /// `/avguard/road_context`, a JSON object of road fields.
    RoadContext,
    /// `/apollo/routing_response` (records: `/apollo/routing_response_history`),
    /// `apollo.routing.RoutingResponse`.
    Routing,
}

impl Channel {
    /// Every consumed channel, in a fixed order (used for per-channel counters).
    pub const ALL: [Channel; 6] = [
        Channel::Localization,
        Channel::Chassis,
        Channel::Obstacles,
        Channel::TrafficLights,
        Channel::RoadContext,
        Channel::Routing,
    ];

    /// The only place a topic string is matched.
    pub fn from_topic(topic: &str) -> Option<Channel> {
        match topic {
            "/apollo/localization/pose" => Some(Channel::Localization),
            "/apollo/canbus/chassis" => Some(Channel::Chassis),
            "/apollo/perception/obstacles" => Some(Channel::Obstacles),
            "/apollo/perception/traffic_light" => Some(Channel::TrafficLights),
            "/avguard/road_context" => Some(Channel::RoadContext),
            "/apollo/routing_response" | "/apollo/routing_response_history" => {
                Some(Channel::Routing)
            }
            _ => None,
        }
    }

    /// The message type the channel carries: the Apollo protobuf message's full name, or `avguard/RoadContext`
    /// for the JSON road fields.
    pub fn type_name(self) -> &'static str {
        match self {
            Channel::Localization => "apollo.localization.LocalizationEstimate",
            Channel::Chassis => "apollo.canbus.Chassis",
            Channel::Obstacles => "apollo.perception.PerceptionObstacles",
            Channel::TrafficLights => "apollo.perception.TrafficLightDetection",
            Channel::RoadContext => "avguard/RoadContext",
            Channel::Routing => "apollo.routing.RoutingResponse",
        }
    }

    /// The topic string of this channel.
    pub fn topic(self) -> &'static str {
        match self {
            Channel::Localization => "/apollo/localization/pose",
            Channel::Chassis => "/apollo/canbus/chassis",
            Channel::Obstacles => "/apollo/perception/obstacles",
            Channel::TrafficLights => "/apollo/perception/traffic_light",
            Channel::RoadContext => "/avguard/road_context",
            Channel::Routing => "/apollo/routing_response",
        }
    }

    /// The protobuf message type carried on the channel, or `None` for the JSON-only road context.
    pub fn proto_type(self) -> Option<&'static str> {
        match self {
            Channel::Localization => Some("apollo.localization.LocalizationEstimate"),
            Channel::Chassis => Some("apollo.canbus.Chassis"),
            Channel::Obstacles => Some("apollo.perception.PerceptionObstacles"),
            Channel::TrafficLights => Some("apollo.perception.TrafficLightDetection"),
            Channel::RoadContext => None,
            Channel::Routing => Some("apollo.routing.RoutingResponse"),
        }
    }

    /// Index into per-channel arrays, matching [`Channel::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Why a message could not be decoded. Each is answered with a rosbridge `status` error or counted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The topic is not one the bridge consumes.
    #[error("unknown topic {0:?}")]
    UnknownTopic(String),
    /// The binary envelope names no channel (an empty message decodes as one).
    #[error("binary envelope names no channel (field 1 `channel` empty or missing; {payload_bytes} payload bytes)")]
    NoChannel {
        /// The payload's length.
        payload_bytes: usize,
    },
    /// The binary envelope itself did not decode.
    #[error("bad binary envelope: {0}")]
    Envelope(prost::DecodeError),
    /// The payload is not a valid protobuf encoding of the channel's type.
    #[error("{channel}: bad protobuf payload: {source}")]
    Protobuf {
        /// The channel.
        channel: &'static str,
        /// The prost error.
        source: prost::DecodeError,
    },
    /// The JSON (or text-format) message does not match the channel's type.
    #[error("{channel}: {reason}")]
    Mapping {
        /// The channel.
        channel: &'static str,
        /// What went wrong, from the mapping layer.
        reason: String,
    },
    /// A field the bridge needs is absent.
    #[error("{channel}: missing {field}")]
    Missing {
        /// The channel.
        channel: &'static str,
        /// The field path.
        field: &'static str,
    },
    /// A repeated field has more entries than a frame may hold.
    #[error("{channel}: {found} entries in {field}, more than the limit of {limit}")]
    TooMany {
        /// The channel.
        channel: &'static str,
        /// The field path.
        field: &'static str,
        /// Entries found.
        found: usize,
        /// The limit (e.g. `laws::frame::MAX_OBSTACLES`).
        limit: usize,
    },
    /// A field holds NaN or an infinity where a finite number is required.
    #[error("{channel}: {field} is not finite")]
    NonFinite {
        /// The channel.
        channel: &'static str,
        /// The field path.
        field: &'static str,
    },
}

/// One decoded simulator message, already converted from its wire type.
#[derive(Debug, Clone, PartialEq)]
pub enum SimMessage {
    /// Ego pose, velocity, acceleration.
    Localization(LocalizationMsg),
    /// Gear, pedals, steering, signals, wheel speed.
    Chassis(ChassisMsg),
    /// Other road users.
    Obstacles(ObstaclesMsg),
    /// Detected traffic lights.
    TrafficLights(TrafficLightsMsg),
    /// Road fields from a source without an HD map.
    RoadContext(RoadContextMsg),
    /// The planned route's lanes.
    Routing(RoutingMsg),
}

/// How a payload is encoded.
#[derive(Debug, Clone, Copy)]
pub enum Payload<'a> {
    /// Protobuf wire encoding.
    Binary(&'a [u8]),
    /// A JSON value in the protobuf JSON mapping (or, for the road context, its own object).
    Json(&'a serde_json::Value),
    /// Protobuf text format (Apollo's `.pb.txt`).
    Text(&'a str),
}

impl SimMessage {
    /// Decodes a binary websocket frame: an `Envelope { channel, payload }`.
    pub fn decode_envelope(bytes: &[u8]) -> Result<SimMessage, DecodeError> {
        use prost::Message as _;
        let envelope = wire::Envelope::decode(bytes).map_err(DecodeError::Envelope)?;
        if envelope.channel.is_empty() {
            return Err(DecodeError::NoChannel {
                payload_bytes: envelope.payload.len(),
            });
        }
        SimMessage::decode(&envelope.channel, Payload::Binary(&envelope.payload))
    }

    /// Decodes one message of `topic`. This is the single dispatch point on the topic string.
    pub fn decode(topic: &str, payload: Payload<'_>) -> Result<SimMessage, DecodeError> {
        let channel = Channel::from_topic(topic)
            .ok_or_else(|| DecodeError::UnknownTopic(topic.to_owned()))?;
        Ok(match channel {
            Channel::Localization => {
                SimMessage::Localization(LocalizationMsg::from_proto(to_prost(channel, payload)?)?)
            }
            Channel::Chassis => {
                SimMessage::Chassis(ChassisMsg::from_proto(to_prost(channel, payload)?)?)
            }
            Channel::Obstacles => {
                SimMessage::Obstacles(ObstaclesMsg::from_proto(to_prost(channel, payload)?)?)
            }
            Channel::TrafficLights => SimMessage::TrafficLights(TrafficLightsMsg::from_proto(
                to_prost(channel, payload)?,
            )?),
            Channel::RoadContext => SimMessage::RoadContext(RoadContextMsg::decode(payload)?),
            Channel::Routing => {
                SimMessage::Routing(RoutingMsg::from_proto(to_prost(channel, payload)?)?)
            }
        })
    }

    /// The channel the message came from.
    pub fn channel(&self) -> Channel {
        match self {
            SimMessage::Localization(_) => Channel::Localization,
            SimMessage::Chassis(_) => Channel::Chassis,
            SimMessage::Obstacles(_) => Channel::Obstacles,
            SimMessage::TrafficLights(_) => Channel::TrafficLights,
            SimMessage::RoadContext(_) => Channel::RoadContext,
            SimMessage::Routing(_) => Channel::Routing,
        }
    }

    /// Message time, s: localization `measurement_time` (else header time), the header time of the others;
    /// `None` when the message carries no usable time (it is then held without moving the clock).
    pub fn time_s(&self) -> Option<f64> {
        match self {
            SimMessage::Localization(m) => Some(m.time_s),
            SimMessage::Chassis(m) => m.time_s,
            SimMessage::Obstacles(m) => m.time_s,
            SimMessage::TrafficLights(m) => m.time_s,
            SimMessage::RoadContext(m) => m.time_s,
            SimMessage::Routing(m) => m.time_s,
        }
    }
}

/// Converts any payload encoding of `channel` into its prost type `T`.
fn to_prost<T: prost::Message + Default>(
    channel: Channel,
    payload: Payload<'_>,
) -> Result<T, DecodeError> {
    let topic = channel.topic();
    let mapping = |reason: String| DecodeError::Mapping {
        channel: topic,
        reason,
    };
    match payload {
        Payload::Binary(bytes) => T::decode(bytes).map_err(|source| DecodeError::Protobuf {
            channel: topic,
            source,
        }),
        Payload::Json(value) => {
            let desc = descriptor_of(channel)?;
            let options = DeserializeOptions::new().deny_unknown_fields(false);
            // The field path is tracked so that an error names the field it is about.
            let mut track = serde_path_to_error::Track::new();
            let tracked = serde_path_to_error::Deserializer::new(value, &mut track);
            let dynamic = DynamicMessage::deserialize_with_options(desc, tracked, &options)
                .map_err(|err| {
                    let path = track.path().to_string();
                    mapping(if path.is_empty() || path == "." {
                        err.to_string()
                    } else {
                        format!("field `{path}`: {err}")
                    })
                })?;
            dynamic
                .transcode_to::<T>()
                .map_err(|err| mapping(err.to_string()))
        }
        Payload::Text(text) => {
            let desc = descriptor_of(channel)?;
            let dynamic = DynamicMessage::parse_text_format(desc, text)
                .map_err(|err| mapping(err.to_string()))?;
            dynamic
                .transcode_to::<T>()
                .map_err(|err| mapping(err.to_string()))
        }
    }
}

fn descriptor_of(channel: Channel) -> Result<prost_reflect::MessageDescriptor, DecodeError> {
    let topic = channel.topic();
    channel
        .proto_type()
        .and_then(wire::descriptor)
        .ok_or(DecodeError::Mapping {
            channel: topic,
            reason: "no protobuf descriptor for this channel".to_owned(),
        })
}

/// `Some(v)` when `v` is finite: Apollo's NaN default means "not reported".
pub(crate) fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}
