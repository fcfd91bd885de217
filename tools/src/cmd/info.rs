//! `avguard info [--json] MODEL`: list a model's properties with predicates, state count and PAC summary.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context;
use monitor::{Model, PropertyModel};

/// Arguments of `avguard info`.
#[derive(clap::Args)]
pub struct Args {
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// The model file (written by `avguard learn`).
    model: PathBuf,
}

/// Runs `avguard info`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let bytes = std::fs::read(&args.model)
        .with_context(|| format!("cannot read {}", args.model.display()))?;
    let model = Model::from_bytes(&bytes)
        .with_context(|| format!("{} is not a usable model", args.model.display()))?;
    let text = if args.json {
        json(&model)
    } else {
        text(&model)
    };
    println!("{text}");
    Ok(())
}

/// A JSON string literal (quotes, backslashes and control characters escaped).
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn property_json(p: &PropertyModel) -> String {
    let pac = p.pac();
    let preds: Vec<String> = p.predicates().iter().map(|s| quote(s)).collect();
    let worst: Vec<String> = pac
        .worst(5)
        .iter()
        .map(|(s, n, r)| format!("{{\"state\":{s},\"n\":{n},\"required\":{}}}", r.ceil()))
        .collect();
    format!(
        "{{\"name\":{},\"predicates\":[{}],\"unsafe\":{},\"states\":{},\"transitions\":{},\"runs\":{},\
         \"pac\":{{\"met\":{},\"total\":{},\"visited\":{},\"epsilon\":{},\"delta\":{},\"worst\":[{}]}},\
         \"horizons_steps\":[{}]}}",
        quote(p.name()),
        preds.join(","),
        quote(&p.predicates()[p.unsafe_bit()]),
        p.n_states(),
        p.dtmc().n_transitions(),
        p.counts().n_runs(),
        pac.met(),
        pac.total(),
        pac.visited(),
        pac.config().epsilon,
        pac.config().delta,
        worst.join(","),
        p.table()
            .horizons_steps()
            .iter()
            .map(|h| h.to_string())
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// What `avguard info --json` prints for `model` (also the Python package's `Model.info()`).
pub fn json(model: &Model) -> String {
    let props: Vec<String> = model.properties().iter().map(property_json).collect();
    format!("{{\"properties\":[{}]}}", props.join(","))
}

fn text(model: &Model) -> String {
    let mut out = String::new();
    for p in model.properties() {
        let pac = p.pac();
        let _ = writeln!(
            out,
            "{}: {} states, {} transitions, {} runs; unsafe = {}",
            p.name(),
            p.n_states(),
            p.dtmc().n_transitions(),
            p.counts().n_runs(),
            p.predicates()[p.unsafe_bit()]
        );
        for (i, pred) in p.predicates().iter().enumerate() {
            let _ = writeln!(out, "  bit {i}: {pred}");
        }
        let _ = writeln!(
            out,
            "  PAC (epsilon {}, delta {}): {} / {} states meet the bound ({} visited)",
            pac.config().epsilon,
            pac.config().delta,
            pac.met(),
            pac.total(),
            pac.visited()
        );
        for (s, n, r) in pac.worst(5) {
            let _ = writeln!(out, "    state {s}: {n} of {} required visits", r.ceil());
        }
    }
    out.trim_end().to_string()
}
