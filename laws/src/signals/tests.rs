use super::*;
use crate::frame::{light_color, Frame};

#[test]
fn units_and_lawbreaker_fixes() {
    let f = Frame {
        speed_mps: 10.0,
        turn_signal: turn_signal::RIGHT,
        light_color: light_color::NONE,
        speed_limit_mps: 12.5,
        stopline_dist_m: 4.0,
        ..Frame::default()
    };
    let s = Signals::from_frame(&f, &SignalContext { time_h: 21.5, ..SignalContext::default() });
    assert_eq!(s.get(Signal::Speed), 36.0);
    assert_eq!(s.get(Signal::TurnSignal), 2.0, "right stays 2 (LawBreaker collapsed it to 1)");
    assert_eq!(s.get(Signal::LightColor), 0.0, "no light is 0, not green");
    assert_eq!(s.get(Signal::SpeedUpper), 45.0, "lane limit in km/h, not a constant");
    assert_eq!(s.get(Signal::StoplineAhead), 4.0);
    assert_eq!(s.get(Signal::JunctionAhead), f64::INFINITY);
    assert_eq!(s.get(Signal::NpcAhead), f64::INFINITY);
    assert_eq!(s.get(Signal::Time), 21.5);
    assert_eq!(s.get(Signal::Visibility), 100.0);
}

#[test]
fn every_signal_name_round_trips() {
    for &sig in Signal::ALL {
        assert_eq!(Signal::from_name(sig.name()), Some(sig));
        assert!(!UNAVAILABLE.contains(&sig.name()));
    }
    assert_eq!(Signal::ALL.len(), N_SIGNALS);
}
