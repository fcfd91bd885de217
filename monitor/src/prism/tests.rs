use super::*;
use crate::counts::Counts;
use crate::property::BuildConfig;

#[test]
fn writes_prism_explicit_files_for_a_tiny_property() {
    let preds = vec!["collision".to_string()];
    let cfg = BuildConfig {
        horizons_steps: vec![1],
        ..BuildConfig::default()
    };
    let d = PropertyModel::domain_for(&preds, 0, &cfg).unwrap();
    let mut c = Counts::new(3);
    c.observe_trace(&d, &[0, 0, 1]).unwrap();
    c.observe_trace(&d, &[0, 2]).unwrap();
    let p = PropertyModel::build("no_collision", preds, 0, c, &cfg).unwrap();
    let mut tra = Vec::new();
    write_tra(&p, &mut tra).unwrap();
    // State 0: counts 0->0: 1, 0->1: 1, 0->2: 1, plus α = 1 each -> 1/3 each.
    let third = 1.0f64 / 3.0;
    let expected = format!("3 5\n0 0 {third}\n0 1 {third}\n0 2 {third}\n1 1 1\n2 2 1\n");
    assert_eq!(String::from_utf8(tra).unwrap(), expected);
    let mut lab = Vec::new();
    write_lab(&p, &mut lab).unwrap();
    assert_eq!(
        String::from_utf8(lab).unwrap(),
        "0=\"init\" 1=\"deadlock\" 2=\"unsafe\"\n0: 0\n1: 2\n"
    );
    let mut csv = Vec::new();
    write_table_csv(&p, &mut csv).unwrap();
    // x0 = 1/3 + x0/3 -> x0 = 1/2.
    let csv = String::from_utf8(csv).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0], ["state", "bits", "p_unsafe"]);
    assert_eq!((rows[1][1], rows[2][1], rows[3][1]), ("0", "1", "done"));
    let x: Vec<f64> = rows[1..].iter().map(|r| r[2].parse().unwrap()).collect();
    assert!((x[0] - 0.5).abs() < 1e-15 && x[1] == 1.0 && x[2] == 0.0);
}
