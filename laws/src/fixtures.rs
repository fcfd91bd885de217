//! Data-driven law tests: a compact frame-trace format and one [`check`] helper that renders the verdict
//! trace for an `expect![...]` snapshot (`UPDATE_EXPECT=1 cargo test -p laws` rewrites the snapshots).
//!
//! A fixture (`laws/tests/fixtures/NAME.trace`) names one law and gives one or more runs:
//!
//! ```text
//! # comments start with '#'
//! law law38_sub1                        # a law shipped in laws/specs, by name
//! law l = G(hornOn -> F[0,2] lowBeamOn); # or an inline law text (the rest of the line)
//! window 100                            # optional: EvalConfig::window_frames
//! period 0.1                            # optional: EvalConfig::frame_period_s
//! run violating                         # a fresh evaluator and default signals
//! 20 trafficLightAhead.color=green stoplineAhead=1.5 speed=0
//! 30 speed=10                           # settings hold until changed
//! ```
//!
//! A frame line is `N signal=value ...`: set the signals, then emit N frames. Values are numbers, `inf`,
//! or the law language's constants (`red`, `yellow`, `green`, `left`, `right`). The snapshot lists, per
//! run, the frames where a violation became certain (`L`) and the frames where `L.w` is 1, as ranges.

use std::fmt::Write as _;
use std::path::Path;

use crate::eval::{EvalConfig, Evaluator};
use crate::lang::lawset::{LawSet, LawSource};
use crate::signals::{Signal, Signals};

fn value(text: &str) -> f64 {
    match text {
        "inf" => f64::INFINITY,
        "red" => 1.0,
        "yellow" | "right" => 2.0,
        "green" => 3.0,
        "left" => 1.0,
        "straight" => 0.0,
        _ => text
            .parse()
            .unwrap_or_else(|_| panic!("bad value {text:?}")),
    }
}

/// `40, 45..47` for the sorted frames `[40, 45, 46, 47]`.
fn ranges(frames: &[usize]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < frames.len() {
        let mut j = i;
        while j + 1 < frames.len() && frames[j + 1] == frames[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out += ", ";
        }
        if j == i {
            write!(out, "{}", frames[i]).unwrap();
        } else {
            write!(out, "{}..{}", frames[i], frames[j]).unwrap();
        }
        i = j + 1;
    }
    if out.is_empty() {
        out += "-";
    }
    out
}

/// Runs fixture `name` (`laws/tests/fixtures/{name}.trace`) and renders its verdict trace.
pub fn render(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.trace"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut cfg = EvalConfig::default();
    let mut law: Option<(LawSet, usize)> = None;
    let mut runs: Vec<(String, Vec<Signals>)> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        let ctx = || format!("{}:{}", path.display(), n + 1);
        if line.is_empty() {
            continue;
        }
        let (head, rest) = line.split_once(' ').unwrap_or((line, ""));
        match head {
            "law" if rest.contains('=') => {
                let set = LawSet::parse(&[LawSource {
                    name: format!("{name}.trace"),
                    text: rest.to_string(),
                }])
                .unwrap_or_else(|e| panic!("{}: {e}", ctx()));
                let last = set.laws().len() - 1;
                law = Some((set, last));
            }
            "law" => {
                let set = LawSet::parse(&crate::shipped::sources()).unwrap();
                let i = set
                    .index_of(rest.trim())
                    .unwrap_or_else(|| panic!("{}: no shipped law {rest}", ctx()));
                law = Some((set, i));
            }
            "window" => cfg.window_frames = rest.trim().parse().unwrap(),
            "period" => cfg.frame_period_s = rest.trim().parse().unwrap(),
            "run" => runs.push((rest.trim().to_string(), Vec::new())),
            count => {
                let count: usize = count.parse().unwrap_or_else(|_| {
                    panic!("{}: expected law/window/period/run or a count", ctx())
                });
                let (_, frames) = runs
                    .last_mut()
                    .unwrap_or_else(|| panic!("{}: frames before `run`", ctx()));
                let mut s = frames.last().copied().unwrap_or_default();
                for kv in rest.split_whitespace() {
                    let (k, v) = kv
                        .split_once('=')
                        .unwrap_or_else(|| panic!("{}: bad {kv:?}", ctx()));
                    let sig =
                        Signal::from_name(k).unwrap_or_else(|| panic!("{}: no signal {k}", ctx()));
                    s.set(sig, value(v));
                }
                frames.extend(std::iter::repeat_n(s, count));
            }
        }
    }
    let (set, i) = law.unwrap_or_else(|| panic!("{}: no `law` line", path.display()));
    let mut out = String::new();
    for (label, frames) in &runs {
        let mut ev = Evaluator::new(&set, &cfg).unwrap();
        let (mut now, mut win) = (Vec::new(), Vec::new());
        for (k, s) in frames.iter().enumerate() {
            let v = ev.step(s);
            if v.violated_now(i) {
                now.push(k);
            }
            if v.in_window(i) {
                win.push(k);
            }
        }
        writeln!(
            out,
            "{label} ({} frames): L at {}; L.w at {}",
            frames.len(),
            ranges(&now),
            ranges(&win)
        )
        .unwrap();
    }
    out
}

/// Checks fixture `name` against its snapshot.
pub fn check(name: &str, expect: expect_test::Expect) {
    expect.assert_eq(&render(name));
}

#[cfg(test)]
mod tests;
