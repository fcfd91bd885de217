//! A set of named laws read from law texts (`name = formula;`), in order.
//!
//! Every assignment defines a law. A later formula may use an earlier law's name; the name stands for
//! that law's formula. A law is monitored as `G(body)`: leading `G`s (also under `&`: `G a & G b` is
//! `G(a & b)`) are stripped to get the body, whose every temporal operator must be bounded so that the
//! body's truth at a frame is decided a fixed number of frames later.

use std::collections::HashMap;
use std::fmt;

use super::atom::Atom;
use super::error::ParseError;
use super::formula::Formula;
use super::parser::{KnownLaw, Parser};

/// One law text and its label for error messages (usually the file name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LawSource {
    /// Label used in errors, usually the file name, e.g. `law38.law`.
    pub name: String,
    /// The text.
    pub text: String,
}

/// A parsed law.
#[derive(Debug, Clone, PartialEq)]
pub struct Law {
    name: String,
    text: String,
    file: String,
    line: usize,
    formula: Formula,
    body: Formula,
}

/// A predicate of the monitor's abstraction derived from a law.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Predicate {
    /// A canonical atom, evaluated on one frame's signals.
    Atom(Atom),
    /// "A violation of this law became certain within the evaluator's window" (the `L.w` column).
    ViolatedInWindow(String),
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::Atom(a) => write!(f, "{a}"),
            Predicate::ViolatedInWindow(law) => write!(f, "{law}.w"),
        }
    }
}

impl Law {
    /// The law's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file the law is defined in, as its source was named.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The assignment as written (`name = formula;`).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The full formula, with earlier law names replaced by their formulas.
    pub fn formula(&self) -> &Formula {
        &self.formula
    }

    /// The body monitored at every frame (the formula without its leading `G`s).
    pub fn body(&self) -> &Formula {
        &self.body
    }

    /// The minimal set of atomic predicates the law depends on: canonical (`<`, `<=`, `==`), deduplicated,
    /// in order of first use. `speed > 0.5` and `speed <= 0.5` are one atom, `speed<=0.5`.
    pub fn atoms(&self) -> Vec<Atom> {
        let mut out: Vec<Atom> = Vec::new();
        self.body.for_each_atom(&mut |a| {
            if !out.contains(a) {
                out.push(a.clone());
            }
        });
        out
    }

    /// The abstraction predicates of the law (paper RQ4): its atoms plus "violated within the window".
    pub fn predicates(&self) -> Vec<Predicate> {
        let mut out: Vec<Predicate> = self.atoms().into_iter().map(Predicate::Atom).collect();
        out.push(Predicate::ViolatedInWindow(self.name.clone()));
        out
    }

    /// Where the law is defined: `file:line:col`.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// Laws in definition order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LawSet {
    laws: Vec<Law>,
}

/// Strips leading `G`s through conjunctions: `G a & G b` → `a & b`.
fn strip_always(f: &Formula) -> Formula {
    match f {
        Formula::Always(i, p) if i.bounds_s.is_none() => strip_always(p),
        Formula::And(a, b) => Formula::And(Box::new(strip_always(a)), Box::new(strip_always(b))),
        other => other.clone(),
    }
}

/// The first unbounded temporal operator in a body, as (operator, line, col).
fn unbounded(f: &Formula) -> Option<(&'static str, usize, usize)> {
    match f {
        Formula::Const(_) | Formula::Atom(_) => None,
        Formula::Not(p) | Formula::Next(p) => unbounded(p),
        Formula::And(a, b) | Formula::Or(a, b) | Formula::Implies(a, b) => {
            unbounded(a).or_else(|| unbounded(b))
        }
        Formula::Eventually(i, p) | Formula::Always(i, p) => match i.bounds_s {
            None => Some((
                if matches!(f, Formula::Always(..)) {
                    "G"
                } else {
                    "F"
                },
                i.line,
                i.col,
            )),
            Some(_) => unbounded(p),
        },
        Formula::Until(i, a, b) => match i.bounds_s {
            None => Some(("U", i.line, i.col)),
            Some((lo, _)) if lo < 0.0 => Some(("U with a negative bound", i.line, i.col)),
            Some(_) => unbounded(a).or_else(|| unbounded(b)),
        },
    }
}

impl LawSet {
    /// Parses law texts in the given order (callers pass files sorted by name).
    pub fn parse(sources: &[LawSource]) -> Result<LawSet, ParseError> {
        let mut known: HashMap<String, KnownLaw> = HashMap::new();
        let mut laws = Vec::new();
        for src in sources {
            let mut parser = Parser::new(&src.name, &src.text, std::mem::take(&mut known))?;
            let mut parsed = Vec::new();
            while !parser.at_eof() {
                let st = parser.statement()?;
                if !parser.define(st.name.clone(), st.formula.clone(), st.depth) {
                    return Err(ParseError {
                        file: src.name.clone(),
                        line: st.line,
                        col: st.col,
                        message: format!("law '{}' is defined twice", st.name),
                    });
                }
                parsed.push((st.name, st.formula, st.range, st.line));
            }
            known = parser.into_laws();
            for (name, formula, (start, end), line) in parsed {
                let body = strip_always(&formula);
                if let Some((op, l, c)) = unbounded(&body) {
                    return Err(ParseError {
                        file: src.name.clone(),
                        line: l,
                        col: c,
                        message: format!(
                            "law '{name}': unbounded {op} inside the law body cannot be decided with a finite \
                             delay (only leading G's are allowed unbounded)"
                        ),
                    });
                }
                let text = src
                    .text
                    .get(start..end.min(src.text.len()))
                    .unwrap_or_default()
                    .to_string();
                laws.push(Law {
                    name,
                    text,
                    file: src.name.clone(),
                    line,
                    formula,
                    body,
                });
            }
        }
        Ok(LawSet { laws })
    }

    /// The laws named in `names` (in that order; unknown names and repeats skipped), as they were parsed:
    /// each keeps its formula (earlier laws inlined), file and positions, so it needs none of the others.
    pub fn subset(&self, names: &[&str]) -> LawSet {
        let mut laws: Vec<Law> = Vec::new();
        for name in names {
            if let Some(law) = self.laws.iter().find(|l| l.name == *name) {
                if !laws.iter().any(|l| l.name == law.name) {
                    laws.push(law.clone());
                }
            }
        }
        LawSet { laws }
    }

    /// The laws in definition order.
    pub fn laws(&self) -> &[Law] {
        &self.laws
    }

    /// The position of the law called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.laws.iter().position(|l| l.name == name)
    }
}
