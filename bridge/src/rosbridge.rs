//! rosbridge v2 JSON ops, as a stock rosbridge client (e.g. roslibpy) sends them.
//!
//! Only the ops the bridge serves are modelled: `advertise`, `unadvertise`, `publish`, `subscribe`,
//! `unsubscribe`, `call_service` (answered by [`crate::rosapi`]) and `set_level`; the op string is matched once in
//! [`Op::parse`]. Extra keys (`type`, `latch`, `queue_size`, `throttle_rate`, `compression`, ...) are
//! accepted and ignored. Replies are `status` ops, and `service_response` ops to service calls.

use serde_json::{json, Value};

/// One parsed client op.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// The client will publish on `topic`.
    Advertise {
        /// Request id (a string, number, ... as given), echoed in status replies.
        id: Option<Value>,
        /// Topic.
        topic: String,
    },
    /// The client stops publishing on `topic`.
    Unadvertise {
        /// Request id.
        id: Option<Value>,
        /// Topic.
        topic: String,
    },
    /// A message on `topic`.
    Publish {
        /// Request id.
        id: Option<Value>,
        /// Topic.
        topic: String,
        /// The message.
        msg: Value,
    },
    /// The client wants messages of `topic`.
    Subscribe {
        /// Request id.
        id: Option<Value>,
        /// Topic.
        topic: String,
    },
    /// The client no longer wants `topic`.
    Unsubscribe {
        /// Request id.
        id: Option<Value>,
        /// Topic.
        topic: String,
    },
    /// The client sets the least severe `status` it wants from now on.
    SetLevel {
        /// Request id.
        id: Option<Value>,
        /// The level.
        level: StatusLevel,
    },
    /// The client calls `service` with `args` (an object, an array of positional arguments, or null).
    CallService {
        /// Request id, echoed in the `service_response`.
        id: Option<Value>,
        /// Service name.
        service: String,
        /// Arguments.
        args: Value,
    },
}

/// Why a text frame is not a usable op.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OpError {
    /// Not JSON.
    #[error("malformed JSON: {0}")]
    Json(String),
    /// JSON but not an object with a string `op`.
    #[error("expected a JSON object with a string \"op\"")]
    NoOp,
    /// Nothing but white space.
    #[error("empty text frame: expected a JSON object with a string \"op\"")]
    Empty,
    /// An op the bridge does not serve.
    #[error("unsupported op {0:?}")]
    UnknownOp(String),
    /// A required key is missing or has the wrong type.
    #[error("op {op}: missing or invalid {key:?}")]
    Field {
        /// The op.
        op: &'static str,
        /// The key.
        key: &'static str,
    },
}

impl Op {
    /// Parses every JSON object in a text frame (rosbridge tolerates several concatenated objects).
    /// Each element carries the op's `id` (when readable) alongside the result. A frame of nothing but
    /// white space is one [`OpError::Empty`].
    pub fn parse_frame(text: &str) -> Vec<(Option<Value>, Result<Op, OpError>)> {
        let mut out = Vec::new();
        for value in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
            match value {
                Ok(v) => {
                    out.push((op_id(&v), Op::parse(v)));
                }
                Err(e) => {
                    out.push((None, Err(OpError::Json(e.to_string()))));
                    break;
                }
            }
        }
        if out.is_empty() {
            out.push((None, Err(OpError::Empty)));
        }
        out
    }

    /// Parses one op object.
    pub fn parse(mut v: Value) -> Result<Op, OpError> {
        let id = op_id(&v);
        let op = v
            .get("op")
            .and_then(Value::as_str)
            .ok_or(OpError::NoOp)?
            .to_owned();
        // The string at `key` of op `op`, or the error naming both.
        let text = |v: &Value, op: &'static str, key: &'static str| {
            v.get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or(OpError::Field { op, key })
        };
        let topic = |v: &Value, op: &'static str| text(v, op, "topic");
        match op.as_str() {
            "advertise" => Ok(Op::Advertise {
                topic: topic(&v, "advertise")?,
                id,
            }),
            "unadvertise" => Ok(Op::Unadvertise {
                topic: topic(&v, "unadvertise")?,
                id,
            }),
            "subscribe" => Ok(Op::Subscribe {
                topic: topic(&v, "subscribe")?,
                id,
            }),
            "unsubscribe" => Ok(Op::Unsubscribe {
                topic: topic(&v, "unsubscribe")?,
                id,
            }),
            "publish" => {
                let topic = topic(&v, "publish")?;
                let msg = v
                    .get_mut("msg")
                    .map(Value::take)
                    .filter(Value::is_object)
                    .ok_or(OpError::Field {
                        op: "publish",
                        key: "msg",
                    })?;
                Ok(Op::Publish { id, topic, msg })
            }
            "call_service" => {
                let service = text(&v, "call_service", "service")?;
                let args = v.get_mut("args").map(Value::take).unwrap_or(Value::Null);
                Ok(Op::CallService { id, service, args })
            }
            "set_level" => {
                let level = text(&v, "set_level", "level")?;
                let level = StatusLevel::parse(&level).ok_or(OpError::Field {
                    op: "set_level",
                    key: "level",
                })?;
                Ok(Op::SetLevel { id, level })
            }
            _ => Err(OpError::UnknownOp(op)),
        }
    }
}

/// An op's `id`, as given (rosbridge clients may use strings or numbers); `null` counts as none.
fn op_id(v: &Value) -> Option<Value> {
    v.get("id").filter(|id| !id.is_null()).cloned()
}

/// The severity of a `status` op, ordered: a client at a level gets the statuses at it and above
/// (`set_level`; rosbridge's levels). `None` gets no status at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StatusLevel {
    /// `info`: answers to requests (`stats`, `reload`) and errors.
    Info,
    /// `warning`.
    Warning,
    /// `error`: only errors.
    Error,
    /// `none`: no status.
    None,
}

impl StatusLevel {
    /// The level called `name` (`info`, `warning`, `error`, `none`).
    pub fn parse(name: &str) -> Option<StatusLevel> {
        match name {
            "info" => Some(StatusLevel::Info),
            "warning" => Some(StatusLevel::Warning),
            "error" => Some(StatusLevel::Error),
            "none" => Some(StatusLevel::None),
            _ => None,
        }
    }

    /// The level's name in `status` and `set_level` ops.
    pub fn name(self) -> &'static str {
        match self {
            StatusLevel::Info => "info",
            StatusLevel::Warning => "warning",
            StatusLevel::Error => "error",
            StatusLevel::None => "none",
        }
    }
}

/// Longest `msg` of a `status` (and error text of a `service_response`), bytes: an error that quotes the
/// client's input (a topic, a service name) is clipped, so that no reply is much larger than what the
/// client may send (the connection's write buffer is capped).
pub const MAX_STATUS_MSG_BYTES: usize = 4096;

/// `text` cut to at most [`MAX_STATUS_MSG_BYTES`] bytes at a character boundary, with `…` when cut.
fn clip(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_STATUS_MSG_BYTES {
        return text.into();
    }
    let mut end = MAX_STATUS_MSG_BYTES - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end]).into()
}

/// A `status` op (`msg` clipped to [`MAX_STATUS_MSG_BYTES`]).
pub fn status(level: StatusLevel, id: Option<&Value>, msg: &str) -> String {
    let mut v = json!({"op": "status", "level": level.name(), "msg": clip(msg)});
    if let Some(id) = id {
        v["id"] = id.clone();
    }
    v.to_string()
}

/// A `service_response` op: `values` on success (`result` true), or an error message (`result` false).
fn service_response(service: &str, id: Option<&Value>, values: Value, result: bool) -> String {
    let mut v =
        json!({"op": "service_response", "service": service, "values": values, "result": result});
    if let Some(id) = id {
        v["id"] = id.clone();
    }
    v.to_string()
}

/// The `service_response` to a call of `service` with `args` ([`crate::rosapi::call`]), and whether the
/// call succeeded.
pub fn answer_call(service: &str, id: Option<&Value>, args: &Value) -> (String, bool) {
    match crate::rosapi::call(service, args) {
        Ok(values) => (service_response(service, id, values, true), true),
        Err(why) => (
            service_response(service, id, clip(&why).into(), false),
            false,
        ),
    }
}

/// A `publish` op carrying an already serialized `msg` object.
pub fn publish(topic: &str, msg_json: &str) -> String {
    // `topic` is one of our fixed topic names (no characters to escape); `msg_json` is a JSON object.
    format!("{{\"op\":\"publish\",\"topic\":\"{topic}\",\"msg\":{msg_json}}}")
}

#[cfg(test)]
mod level_tests {
    use super::{clip, StatusLevel, MAX_STATUS_MSG_BYTES};

    #[test]
    fn long_status_texts_are_clipped_at_a_character_boundary() {
        assert_eq!(clip("short"), "short");
        let long = "é".repeat(MAX_STATUS_MSG_BYTES);
        let clipped = clip(&long);
        assert!(clipped.len() <= MAX_STATUS_MSG_BYTES, "{}", clipped.len());
        assert!(clipped.ends_with('…'));
    }

    #[test]
    fn level_names_parse_back_and_order_by_severity() {
        let all = [
            StatusLevel::Info,
            StatusLevel::Warning,
            StatusLevel::Error,
            StatusLevel::None,
        ];
        for level in all {
            assert_eq!(StatusLevel::parse(level.name()), Some(level));
        }
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(StatusLevel::parse("loud"), None);
    }
}
