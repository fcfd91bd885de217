//! The `rosapi` services a stock rosbridge client calls to look around before it publishes or subscribes
//! (roslibpy's `get_topics`, `get_topic_type`, `get_services`, `get_nodes`; roslibjs's `getTopics`, ...).
//!
//! rosbridge servers answer them from the ROS graph; the bridge has no graph, so it answers from what it
//! serves: the topics it consumes and publishes, with the message types they carry. Any other service is
//! answered at once with `result: false` and the reason, as rosbridge answers a failed call, so that a
//! client's call fails instead of waiting for a reply that never comes.

use serde_json::{json, Value};

use crate::control_command::CONTROL_COMMAND_TOPIC;
use crate::topics::{ADMIN_TOPIC, INTERVENTION_TOPIC, RISK_TOPIC};
use ingest::message::Channel;

/// The node name the bridge reports.
pub const NODE: &str = "/avguard_bridge";

/// The services answered here.
pub const SERVICES: [&str; 5] = [
    "/rosapi/topics",
    "/rosapi/topic_type",
    "/rosapi/topics_for_type",
    "/rosapi/services",
    "/rosapi/nodes",
];

/// Every topic the bridge serves with its message type: the consumed channels (and the alias a record
/// uses for routing), the admin topic, then the published topics.
pub fn topics() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&'static str, &'static str)> = Channel::ALL
        .iter()
        .map(|c| (c.topic(), c.type_name()))
        .collect();
    out.push((
        "/apollo/routing_response_history",
        Channel::Routing.type_name(),
    ));
    out.push((ADMIN_TOPIC, "avguard/Control"));
    out.push((INTERVENTION_TOPIC, "avguard/Intervention"));
    out.push((RISK_TOPIC, "avguard/Risk"));
    out.push((CONTROL_COMMAND_TOPIC, "apollo.control.ControlCommand"));
    out
}

/// The string argument `key` of a call: from an object (`{"topic": ...}`) or, as roslibjs may send
/// them, the first of positional arguments (`["..."]`).
fn string_arg<'a>(args: &'a Value, key: &str, service: &str) -> Result<&'a str, String> {
    args.get(key)
        .or_else(|| args.get(0))
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{service}: expected args {{\"{key}\": \"...\"}}"))
}

/// Answers a call of `service` with `args`: the response's `values`, or why the call fails.
pub fn call(service: &str, args: &Value) -> Result<Value, String> {
    match service {
        "/rosapi/topics" => {
            let (topics, types): (Vec<_>, Vec<_>) = topics().into_iter().unzip();
            Ok(json!({"topics": topics, "types": types}))
        }
        "/rosapi/topic_type" => {
            let topic = string_arg(args, "topic", service)?;
            // rosapi answers an unknown topic with an empty type.
            let ty = topics()
                .into_iter()
                .find(|(t, _)| *t == topic)
                .map_or("", |(_, ty)| ty);
            Ok(json!({"type": ty}))
        }
        "/rosapi/topics_for_type" => {
            let ty = string_arg(args, "type", service)?;
            let topics: Vec<&str> = topics()
                .into_iter()
                .filter(|(_, t)| *t == ty)
                .map(|(topic, _)| topic)
                .collect();
            Ok(json!({"topics": topics}))
        }
        "/rosapi/services" => Ok(json!({"services": SERVICES})),
        "/rosapi/nodes" => Ok(json!({"nodes": [NODE]})),
        _ => Err(format!(
            "service {service:?} is not provided: avguard answers {}",
            SERVICES.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_served_topic_is_listed_once_with_its_type() {
        let listed = topics();
        let mut names: Vec<&str> = listed.iter().map(|(t, _)| *t).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), listed.len(), "{listed:?}");
        // Whatever the bridge consumes it lists, and what it lists it consumes or publishes.
        for (topic, ty) in &listed {
            assert!(!ty.is_empty(), "{topic}");
            let consumed = Channel::from_topic(topic).is_some() || *topic == ADMIN_TOPIC;
            let published = [INTERVENTION_TOPIC, RISK_TOPIC, CONTROL_COMMAND_TOPIC].contains(topic);
            assert!(consumed != published, "{topic}");
        }
        for c in Channel::ALL {
            assert!(names.contains(&c.topic()), "{c:?}");
        }
    }

    #[test]
    fn calls_answer_from_the_served_topics() {
        let all = call("/rosapi/topics", &Value::Null).unwrap();
        let topics = all["topics"].as_array().unwrap();
        let types = all["types"].as_array().unwrap();
        assert_eq!(topics.len(), types.len());
        let i = topics
            .iter()
            .position(|t| t == "/apollo/canbus/chassis")
            .unwrap();
        assert_eq!(types[i], "apollo.canbus.Chassis");
        assert_eq!(
            call("/rosapi/topic_type", &json!({"topic": "/avguard/risk"})).unwrap(),
            json!({"type": "avguard/Risk"})
        );
        assert_eq!(
            call("/rosapi/topic_type", &json!(["/apollo/control"])).unwrap(),
            json!({"type": "apollo.control.ControlCommand"})
        );
        assert_eq!(
            call("/rosapi/topic_type", &json!({"topic": "/nope"})).unwrap(),
            json!({"type": ""})
        );
        assert_eq!(
            call(
                "/rosapi/topics_for_type",
                &json!({"type": "apollo.routing.RoutingResponse"})
            )
            .unwrap(),
            json!({"topics": ["/apollo/routing_response", "/apollo/routing_response_history"]})
        );
        assert_eq!(
            call("/rosapi/nodes", &json!({})).unwrap(),
            json!({"nodes": [NODE]})
        );
        let services = call("/rosapi/services", &Value::Null).unwrap();
        for s in SERVICES {
            assert!(services["services"].as_array().unwrap().contains(&json!(s)));
            // Every listed service answers (given its argument).
            let args = json!({"topic": "/avguard/risk", "type": "avguard/Risk"});
            assert!(call(s, &args).is_ok(), "{s}");
        }
    }

    #[test]
    fn other_services_and_missing_arguments_fail_with_the_reason() {
        let err = call("/rosapi/get_param", &json!({"name": "x"})).unwrap_err();
        assert!(
            err.contains("\"/rosapi/get_param\" is not provided"),
            "{err}"
        );
        let err = call("/rosapi/topic_type", &json!({})).unwrap_err();
        assert!(err.contains("expected args {\"topic\""), "{err}");
    }
}
