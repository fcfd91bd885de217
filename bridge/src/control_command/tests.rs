use prost::Message as _;

use super::*;

fn intervention(action: Action, target: Option<f64>) -> Intervention {
    Intervention {
        stamp: 3.0,
        property: "p".into(),
        probability: 0.8,
        threshold: 0.5,
        horizon_s: None,
        action,
        target_speed_mps: target,
        state: "1".into(),
        explanation: String::new(),
    }
}

#[test]
fn brake_mapping_is_linear_up_to_full_brake() {
    // Hand values: 8 m/s² is full brake, so 3 m/s² → 37.5 %, 2 → 25 %, 10 → clamped 100 %.
    assert_eq!(brake_pct_for(3.0), 37.5);
    assert_eq!(brake_pct_for(2.0), 25.0);
    assert_eq!(brake_pct_for(8.0), 100.0);
    assert_eq!(brake_pct_for(10.0), 100.0);
    assert_eq!(brake_pct_for(0.0), 0.0);
    assert_eq!(brake_pct_for(-1.0), 0.0);
    assert_eq!(brake_pct_for(f64::NAN), 0.0);
    assert_eq!(brake_pct_for(f64::INFINITY), 100.0);
}

#[test]
fn stop_decelerates_enough_to_stop_before_the_line() {
    let config = EnforceConfig::default(); // decel 3, margin 2
    let frame = Frame {
        speed_mps: 10.0,
        stopline_dist_m: 12.0,
        ..Frame::default()
    };
    // room = 12 − 2 = 10 m; a = 10² / (2·10) = 5 m/s² → 62.5 % brake.
    let i = intervention(Action::Stop, Some(0.0));
    assert_eq!(target_decel_mps2(&frame, &i, &config), Some(5.0));
    let cmd = control_command(&frame, &i, &config).unwrap();
    assert_eq!(cmd.throttle, Some(0.0));
    assert_eq!(cmd.brake, Some(62.5));
    assert_eq!(cmd.acceleration, Some(-5.0));
    assert_eq!(cmd.speed, Some(0.0));
    assert_eq!(cmd.header.as_ref().unwrap().timestamp_sec, Some(0.0));
    // A far line needs less than the enforcement deceleration: 3 m/s² is the floor → 37.5 %.
    let far = Frame {
        stopline_dist_m: 100.0,
        ..frame.clone()
    };
    assert_eq!(
        control_command(&far, &i, &config).unwrap().brake,
        Some(37.5)
    );
}

#[test]
fn slow_down_brakes_at_the_enforcement_rate_only_when_above_target() {
    let config = EnforceConfig::default();
    let frame = Frame {
        speed_mps: 10.0,
        ..Frame::default()
    };
    let slow = intervention(Action::SlowDown, Some(5.0));
    assert_eq!(
        control_command(&frame, &slow, &config).unwrap().brake,
        Some(37.5)
    );
    let already = intervention(Action::SlowDown, Some(12.0));
    let cmd = control_command(&frame, &already, &config).unwrap();
    assert_eq!((cmd.throttle, cmd.brake), (Some(0.0), Some(0.0)));
    assert!(control_command(&frame, &intervention(Action::Alert, None), &config).is_none());
    assert!(control_command(&frame, &intervention(Action::Clear, None), &config).is_none());
}

#[test]
fn json_and_binary_forms_carry_the_same_command() {
    let config = EnforceConfig::default();
    let frame = Frame {
        t: 4.5,
        speed_mps: 8.0,
        stopline_dist_m: 10.0,
        ..Frame::default()
    };
    let cmd = control_command(&frame, &intervention(Action::Stop, Some(0.0)), &config).unwrap();
    let json: serde_json::Value = serde_json::from_str(&to_json(&cmd).unwrap()).unwrap();
    // room 8 m, a = 64 / 16 = 4 m/s² → 50 %.
    assert_eq!(json["brake"], 50.0);
    assert_eq!(json["throttle"], 0.0);
    assert_eq!(json["header"]["timestampSec"], 4.5);
    assert_eq!(json["header"]["moduleName"], "avguard");
    let env = wire::Envelope::decode(to_envelope(&cmd).as_slice()).unwrap();
    assert_eq!(env.channel, CONTROL_COMMAND_TOPIC);
    assert_eq!(ControlCommand::decode(env.payload.as_slice()).unwrap(), cmd);
}
