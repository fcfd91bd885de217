use super::*;

#[test]
fn lawbreaker_cycle() {
    let l = Light::try_new(15.0, 5.0, 15.0, 0.0).expect("valid");
    assert_eq!(l.color_at(0.0), light_color::GREEN);
    assert_eq!(l.color_at(14.99), light_color::GREEN);
    assert_eq!(l.color_at(15.0), light_color::YELLOW);
    assert_eq!(l.color_at(19.99), light_color::YELLOW);
    assert_eq!(l.color_at(20.0), light_color::RED);
    assert_eq!(l.color_at(35.0), light_color::GREEN);
    assert!((l.remaining_s(16.0) - 4.0).abs() < 1e-12);
}

#[test]
fn offset_shifts_the_cycle() {
    let l = Light::try_new(15.0, 5.0, 15.0, 14.0).expect("valid");
    assert_eq!(l.color_at(0.5), light_color::GREEN);
    assert_eq!(l.color_at(1.0), light_color::YELLOW);
    assert!((l.remaining_s(0.0) - 1.0).abs() < 1e-12);
}

#[test]
fn rejects_bad_phases() {
    assert!(Light::try_new(0.0, 5.0, 15.0, 0.0).is_none());
    assert!(Light::try_new(15.0, f64::NAN, 15.0, 0.0).is_none());
}
