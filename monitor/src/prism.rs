//! Export of a learned property in PRISM's explicit format, so Storm or PRISM can check our numbers.
//!
//! `NAME.tra`: `STATES TRANSITIONS`, then `src dst prob` per transition (0-based). `NAME.lab`:
//! `0="init" 1="deadlock" 2="unsafe"`, then `state: label ids` for each labelled state. `NAME.table.csv`:
//! `state,bits,p_unsafe` with our cached P(F unsafe). Probabilities are printed in Rust's shortest
//! round-trip form, so a reader recovers the exact `f64`s. Everything writes to any `io::Write`; the
//! caller owns the files.

use std::io::{self, Write};

use crate::dtmc::Dtmc;
use crate::property::{unsafe_mask, PropertyModel};
use crate::StateId;

#[cfg(test)]
mod tests;

/// The label declarations that start every label file.
pub const LABELS: &str = "0=\"init\" 1=\"deadlock\" 2=\"unsafe\"";

/// Writes the transition file of a property's chain.
pub fn write_tra<W: Write>(p: &PropertyModel, w: W) -> io::Result<()> {
    write_dtmc_tra(p.dtmc(), w)
}

/// Writes the transition file of any chain.
pub fn write_dtmc_tra<W: Write>(d: &Dtmc, mut w: W) -> io::Result<()> {
    writeln!(w, "{} {}", d.n_states(), d.n_transitions())?;
    for s in 0..d.n_states() as StateId {
        let (cols, probs) = d.row(s);
        for (&j, &q) in cols.iter().zip(probs) {
            writeln!(w, "{s} {j} {q}")?;
        }
    }
    w.flush()
}

/// Writes the label file: `init` on the states runs started in (state 0 when none was recorded),
/// `deadlock` on states without an estimate, `unsafe` on unsafe states.
pub fn write_lab<W: Write>(p: &PropertyModel, mut w: W) -> io::Result<()> {
    writeln!(w, "{LABELS}")?;
    let n = p.n_states();
    let mut init = vec![false; n];
    let starts = p.counts().initial_states();
    if starts.is_empty() {
        init[0] = true;
    }
    for (s, _) in starts {
        init[s as usize] = true;
    }
    let mut deadlock = vec![false; n];
    for &s in p.deadlocks() {
        deadlock[s as usize] = true;
    }
    let bad = match p.domain() {
        Ok(d) => unsafe_mask(&d),
        Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string())),
    };
    for s in 0..n {
        let labels: Vec<&str> = [(init[s], "0"), (deadlock[s], "1"), (bad[s], "2")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|&(_, id)| id)
            .collect();
        if !labels.is_empty() {
            writeln!(w, "{s}: {}", labels.join(" "))?;
        }
    }
    w.flush()
}

/// Writes our cached table: `state,bits,p_unsafe`.
pub fn write_table_csv<W: Write>(p: &PropertyModel, mut w: W) -> io::Result<()> {
    let d = match p.domain() {
        Ok(d) => d,
        Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string())),
    };
    writeln!(w, "state,bits,p_unsafe")?;
    for (s, x) in p.table().eventually_all().iter().enumerate() {
        writeln!(w, "{s},{},{x}", d.bit_string(s as StateId))?;
    }
    w.flush()
}
