//! Our law verdicts against rtamt's discrete-time STL monitor (Python), on the shipped laws over random and
//! scenario-like traces. rtamt sees each law's atoms as 0/1 signals computed by us, so the check is about
//! the temporal semantics (interval ends, horizons, pending obligations), not float comparisons.

use std::fmt::Write as _;
use std::path::Path;

use crate::support::{python_script, scratch};
use laws::{EvalConfig, Evaluator, Formula, LawSet, LawSource, Signal, Signals};

/// xorshift64*: a small deterministic generator (the test crate has no rand dependency).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn pick(&mut self, xs: &[f64]) -> f64 {
        xs[(self.next() % xs.len() as u64) as usize]
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() % 1_000_000) as f64 / 1e6 < p
    }
}

const INF: f64 = f64::INFINITY;

/// Random signals that change now and then, with values on both sides of every shipped threshold.
pub fn random_trace(seed: u64, n: usize, change_p: f64) -> Vec<Signals> {
    let mut rng = Rng::new(seed);
    let choices: &[(Signal, &[f64])] = &[
        (Signal::Speed, &[0.0, 0.3, 0.5, 1.0, 10.0, 29.0, 31.0, 60.0]),
        (Signal::LightColor, &[0.0, 1.0, 2.0, 3.0]),
        (Signal::LightBlink, &[0.0, 1.0]),
        (
            Signal::StoplineAhead,
            &[0.0, 0.3, 0.5, 1.0, 2.0, 3.0, 3.5, 5.0, INF],
        ),
        (Signal::JunctionAhead, &[0.0, 0.5, 1.0, 2.0, 5.0, INF]),
        (Signal::CrosswalkAhead, &[1.0, 5.0, 8.0, INF]),
        (Signal::NpcAhead, &[0.0, 0.3, 0.5, 1.0, 2.0, 8.0, 20.0, INF]),
        (Signal::NpcAheadSpeed, &[0.0, 0.3, 0.5, 1.0, 5.0]),
        (Signal::LaneNumber, &[0.0, 1.0, 2.0, 3.0]),
        (Signal::Direction, &[0.0, 1.0, 2.0]),
        (Signal::TurnSignal, &[0.0, 1.0, 2.0]),
        (Signal::PriorityNpcAhead, &[0.0, 1.0]),
        (Signal::PriorityPedsAhead, &[0.0, 1.0]),
        (Signal::TrafficJam, &[0.0, 1.0]),
        (Signal::HighBeam, &[0.0, 1.0]),
        (Signal::LowBeam, &[0.0, 1.0]),
        (Signal::Collision, &[0.0, 0.0, 0.0, 1.0]),
        (Signal::Gear, &[1.0, 1.0, 2.0]),
        (Signal::SignalAhead, &[0.0, 1.0]),
        (Signal::SpeedUpper, &[30.0, 50.0]),
    ];
    let mut s = Signals::default();
    s.set(Signal::Time, rng.pick(&[12.0, 21.0]));
    s.set(Signal::Rain, rng.pick(&[0.0, 0.6]));
    for (sig, xs) in choices {
        s.set(*sig, rng.pick(xs));
    }
    (0..n)
        .map(|_| {
            for (sig, xs) in choices {
                if rng.chance(change_p) {
                    s.set(*sig, rng.pick(xs));
                }
            }
            s
        })
        .collect()
}

/// Approaching a light that turns yellow then red; the ego brakes late or not at all depending on `seed`.
pub fn approach_trace(seed: u64, n: usize) -> Vec<Signals> {
    let mut rng = Rng::new(seed);
    let brake_at = 20 + (rng.next() % 60) as usize;
    let mut dist_m = 40.0;
    let mut speed_kmh: f64 = 36.0;
    (0..n)
        .map(|k| {
            let mut s = Signals::default();
            let color = if k < 30 {
                3.0
            } else if k < 60 {
                2.0
            } else {
                1.0
            };
            if k >= brake_at {
                speed_kmh = (speed_kmh - 2.0).max(0.0);
            }
            dist_m -= speed_kmh / 3.6 * 0.1;
            s.set(Signal::Speed, speed_kmh);
            s.set(Signal::LightColor, color);
            s.set(Signal::SignalAhead, 1.0);
            s.set(
                Signal::StoplineAhead,
                if dist_m >= 0.0 {
                    (dist_m * 10.0).round() / 10.0
                } else {
                    INF
                },
            );
            s.set(Signal::JunctionAhead, (dist_m + 1.0).max(0.0));
            s.set(Signal::LaneNumber, if dist_m >= -1.0 { 2.0 } else { 0.0 });
            s.set(Signal::SpeedUpper, 50.0);
            s
        })
        .collect()
}

/// The law body in rtamt syntax, atoms as `aK >= 0.5`; `None` for what rtamt cannot express directly.
fn to_rtamt(f: &Formula, atom_index: &dyn Fn(&laws::Atom) -> usize) -> Option<String> {
    let b = |i: &laws::Interval| i.bounds_s.map(|(lo, hi)| format!("[{lo}:{hi}]"));
    Some(match f {
        Formula::Const(_) => return None,
        Formula::Atom(a) => format!("(a{} >= 0.5)", atom_index(a)),
        Formula::Not(p) => format!("(not {})", to_rtamt(p, atom_index)?),
        Formula::And(x, y) => format!(
            "({} and {})",
            to_rtamt(x, atom_index)?,
            to_rtamt(y, atom_index)?
        ),
        Formula::Or(x, y) => format!(
            "({} or {})",
            to_rtamt(x, atom_index)?,
            to_rtamt(y, atom_index)?
        ),
        Formula::Implies(x, y) => format!(
            "({} implies {})",
            to_rtamt(x, atom_index)?,
            to_rtamt(y, atom_index)?
        ),
        Formula::Next(p) => format!("(next {})", to_rtamt(p, atom_index)?),
        Formula::Eventually(i, p) if i.bounds_s.is_some_and(|(lo, _)| lo >= 0.0) => {
            format!("(eventually{} {})", b(i)?, to_rtamt(p, atom_index)?)
        }
        Formula::Always(i, p) if i.bounds_s.is_some_and(|(lo, _)| lo >= 0.0) => {
            format!("(always{} {})", b(i)?, to_rtamt(p, atom_index)?)
        }
        Formula::Until(i, x, y) => {
            format!(
                "({} until{} {})",
                to_rtamt(x, atom_index)?,
                b(i)?,
                to_rtamt(y, atom_index)?
            )
        }
        Formula::Eventually(..) | Formula::Always(..) => return None,
    })
}

fn write_cases(dir: &Path, laws: &LawSet, traces: &[(String, Vec<Signals>)]) -> usize {
    let mut n_cases = 0;
    for (trace_name, frames) in traces {
        let mut ev = Evaluator::new(laws, &EvalConfig::default()).expect("shipped laws compile");
        let verdicts: Vec<Vec<bool>> = frames
            .iter()
            .map(|s| {
                let v = ev.step(s);
                (0..v.len()).map(|i| v.violated_now(i)).collect()
            })
            .collect();
        for (li, law) in laws.laws().iter().enumerate() {
            let h = ev.horizon(li).expect("law index") as usize;
            if h + 1 >= frames.len() {
                continue; // a 100 s horizon decides nothing on a short trace
            }
            let atoms = law.atoms();
            let index =
                |a: &laws::Atom| atoms.iter().position(|b| b == a).expect("atom of this law");
            // The law is violated at frame k when some part is false at k minus the part's horizon.
            let parts = ev.parts(li).expect("law index");
            let Some(texts) = parts
                .iter()
                .map(|(f, h)| to_rtamt(f, &index).map(|t| format!("{t}\n{h}")))
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            let mut text = format!("{}\n{}\nt", parts.len(), texts.join("\n"));
            for i in 0..atoms.len() {
                write!(text, ",a{i}").expect("write to string");
            }
            text.push_str(",verdict\n");
            for (k, s) in frames.iter().enumerate() {
                write!(text, "{:.1}", k as f64 * 0.1).expect("write to string");
                for a in &atoms {
                    text.push_str(if a.eval(s) { ",1" } else { ",0" });
                }
                text.push_str(if verdicts[k][li] { ",1\n" } else { ",0\n" });
            }
            std::fs::write(dir.join(format!("{}_{trace_name}.case", law.name())), text)
                .expect("write case");
            n_cases += 1;
        }
    }
    n_cases
}

#[test]
fn shipped_laws_agree_with_rtamt() {
    let mut laws_text = String::new();
    let mut sources = Vec::new();
    // Synthetic laws exercising the operators the shipped laws do not use (U, X, G[a,b], nesting).
    laws_text.push_str(
        "syn_until = hornOn -> (lowBeamOn U[0,0.5] highBeamOn);\n\
         syn_next = lowBeamOn -> X(highBeamOn | F[0.2,0.4] hornOn);\n\
         syn_always = (speed > 30) -> G[0.1,1](speed > 10 | F[0,0.3] lowBeamOn);\n\
         syn_parts = G(~lowBeamOn | speed < 60) & G(hornOn -> F[0,2] highBeamOn)\n\
           & G((speed > 30) -> (F[0,1] lowBeamOn & ~highBeamOn));\n",
    );
    sources.push(LawSource {
        name: "synthetic.law".into(),
        text: laws_text,
    });
    let shipped = laws::shipped::law_set();
    let synthetic = LawSet::parse(&sources).expect("synthetic laws parse");

    let tmp = scratch();
    let dir = tmp.path();
    let mut traces: Vec<(String, Vec<Signals>)> = Vec::new();
    for seed in 0..3 {
        traces.push((format!("random{seed}"), random_trace(seed, 400, 0.08)));
    }
    for seed in 0..3 {
        let mut t = random_trace(100 + seed, 400, 0.3);
        for s in &mut t {
            s.set(
                Signal::Horn,
                f64::from(u8::from(s.get(Signal::Speed) > 20.0)),
            );
        }
        traces.push((format!("busy{seed}"), t));
    }
    for seed in 0..3 {
        traces.push((format!("approach{seed}"), approach_trace(seed, 300)));
    }
    let n = write_cases(dir, &shipped, &traces) + write_cases(dir, &synthetic, &traces);
    assert!(n > 50, "only {n} cases written");

    let out = python_script("rtamt_laws.py")
        .arg(dir)
        .output()
        .expect("run the Python interop script");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        out.status.success(),
        "rtamt check failed:\n{stdout}\n{stderr}"
    );
    // The comparison must have had something to compare, including violations.
    let field = |name: &str| -> u64 {
        stdout
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    assert!(field("positions") > 10_000, "{stdout}");
    assert!(field("violations") > 100, "{stdout}");
}
