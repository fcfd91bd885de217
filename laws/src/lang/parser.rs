//! Recursive-descent parser for LawBreaker's assertion language.
//!
//! Precedence, loosest first: `->`, `|`, `&`, `U`, then the prefix operators `~`, `G`, `F`, `X` (which
//! bind tightest, so `G a -> b` is `(G a) -> b`), then comparisons, then dotted arithmetic. Binary
//! operators are left-associative. Each layer works on an [`Operand`], which is either a formula or an
//! arithmetic term, so that `(currentLane.number .+ 1) == 0` and `(a | b) & c` both parse; a term used as
//! a formula must be a flag (`isTrafficJam` means `isTrafficJam == 1`) and a distance must be called
//! (`stoplineAhead(2)` means `stoplineAhead <= 2`).

use std::collections::HashMap;

use super::atom::{Atom, Cmp, Term};
use super::error::ParseError;
use super::formula::{Formula, Interval};
use super::lexer::{lex, Tok, Token};
use crate::frame::{light_color, planned_turn, turn_signal};
use crate::signals::{Signal, SignalKind, UNAVAILABLE};

/// Either side of the formula/term split.
enum Operand {
    Formula(Formula),
    /// A term and where it starts (for "expected a comparison" errors).
    Term(Term, usize),
}

/// The parser state over one text.
pub struct Parser<'a> {
    toks: Vec<Token>,
    i: usize,
    file: &'a str,
    /// Laws defined earlier; a name used in a formula is replaced by that law's formula.
    laws: HashMap<String, Formula>,
}

/// A parsed `name = formula;`: the name, the formula, the statement's byte range, and its (line, col).
pub type Statement = (String, Formula, (usize, usize), (usize, usize));

/// Enum constants of the language: light colours (Apollo's, as in the frame), and turn signals and planned
/// turns (whose `left`/`right` share the values 1 and 2).
fn constant(name: &str) -> Option<f64> {
    Some(match name {
        "green" => f64::from(light_color::GREEN),
        "yellow" => f64::from(light_color::YELLOW),
        "red" => f64::from(light_color::RED),
        "off" | "forward" => f64::from(turn_signal::NONE),
        "left" => f64::from(turn_signal::LEFT),
        "right" => f64::from(turn_signal::RIGHT),
        _ => return None,
    })
}

// `left`, `right` and `off`/`forward` stand for a turn signal and a planned turn alike.
const _: () = assert!(
    turn_signal::NONE == planned_turn::STRAIGHT
        && turn_signal::LEFT == planned_turn::LEFT
        && turn_signal::RIGHT == planned_turn::RIGHT
);

/// Names that cannot name a law.
pub fn is_reserved(name: &str) -> bool {
    matches!(name, "G" | "F" | "X" | "U" | "true" | "false")
        || constant(name).is_some()
        || Signal::from_name(name).is_some()
        || UNAVAILABLE.contains(&name)
}

/// Builds the canonical formula of a comparison: `>`, `>=`, `!=` become negations.
fn atom_formula(atom: Atom) -> Formula {
    let (canon, negated) = atom.canonical();
    if negated {
        Formula::Not(Box::new(Formula::Atom(canon)))
    } else {
        Formula::Atom(canon)
    }
}

impl Atom {
    /// Parses one atom, e.g. `NPCAhead(10)`, `speed < 0.5`, `PriorityNPCAhead`, or a canonical text.
    ///
    /// A negated comparison (`speed > 0.5`) is returned as written; [`Atom::canonical`] splits it.
    pub fn parse(text: &str) -> Result<Atom, ParseError> {
        let mut p = Parser::new("atom", text, HashMap::new())?;
        let start = p.i;
        let lhs = p.arith()?;
        let atom = if let Tok::Cmp(cmp) = p.peek().tok {
            p.i += 1;
            let rhs = p.arith()?;
            match (lhs, rhs) {
                (Operand::Term(l, _), Operand::Term(r, _)) => Atom::new(l, cmp, r),
                _ => {
                    return Err(
                        p.error_at(start, "expected a comparison of signals and numbers".into())
                    )
                }
            }
        } else {
            match p.to_formula(lhs)? {
                Formula::Atom(a) => a,
                _ => return Err(p.error_at(start, "expected a single atom".into())),
            }
        };
        p.expect(&Tok::Eof, "end of the atom")?;
        Ok(atom)
    }
}

impl<'a> Parser<'a> {
    /// Tokenises `text`.
    pub fn new(
        file: &'a str,
        text: &str,
        laws: HashMap<String, Formula>,
    ) -> Result<Self, ParseError> {
        Ok(Parser {
            toks: lex(file, text)?,
            i: 0,
            file,
            laws,
        })
    }

    /// Makes `name` usable in later formulas; false when it is already defined.
    pub fn define(&mut self, name: String, formula: Formula) -> bool {
        if self.laws.contains_key(&name) {
            return false;
        }
        self.laws.insert(name, formula);
        true
    }

    /// Gives back the laws known so far.
    pub fn into_laws(self) -> HashMap<String, Formula> {
        self.laws
    }

    fn peek(&self) -> &Token {
        // The token list always ends with Eof and `i` never passes it.
        &self.toks[self.i.min(self.toks.len() - 1)]
    }

    fn error_at(&self, i: usize, message: String) -> ParseError {
        let t = &self.toks[i.min(self.toks.len() - 1)];
        ParseError {
            file: self.file.to_string(),
            line: t.line,
            col: t.col,
            message,
        }
    }

    fn expected(&self, what: &str) -> ParseError {
        self.error_at(
            self.i,
            format!("expected {what} but found {}", self.peek().tok.describe()),
        )
    }

    fn expect(&mut self, tok: &Tok, what: &str) -> Result<(), ParseError> {
        if &self.peek().tok == tok {
            self.i += 1;
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    /// True at the end of the text.
    pub fn at_eof(&self) -> bool {
        self.peek().tok == Tok::Eof
    }

    /// Parses `name = formula ;` and returns the name, the formula, and the byte range of the statement.
    pub fn statement(&mut self) -> Result<Statement, ParseError> {
        let start = self.peek().offset;
        let (line, col) = (self.peek().line, self.peek().col);
        let Tok::Ident(name) = self.peek().tok.clone() else {
            return Err(self.expected("a law name"));
        };
        if is_reserved(&name) {
            return Err(self.error_at(
                self.i,
                format!("'{name}' is reserved and cannot name a law"),
            ));
        }
        self.i += 1;
        self.expect(&Tok::Assign, "'=' after the law name")?;
        let formula = self.formula()?;
        let end = self.peek().offset;
        self.expect(&Tok::Semi, "';' or an operator")?;
        Ok((name, formula, (start, end + 1), (line, col)))
    }

    /// Parses a whole formula.
    pub fn formula(&mut self) -> Result<Formula, ParseError> {
        let op = self.implies()?;
        self.to_formula(op)
    }

    fn to_formula(&self, op: Operand) -> Result<Formula, ParseError> {
        match op {
            Operand::Formula(f) => Ok(f),
            Operand::Term(Term::Signal(sig), _) if sig.kind() == SignalKind::Flag => Ok(
                Formula::Atom(Atom::new(Term::Signal(sig), Cmp::Eq, Term::Const(1.0))),
            ),
            Operand::Term(Term::Signal(sig), at) if sig.kind() == SignalKind::Distance => Err(self
                .error_at(
                    at,
                    format!(
                        "expected '(' and a distance after {}, e.g. {}(2)",
                        sig.name(),
                        sig.name()
                    ),
                )),
            Operand::Term(_, at) => Err(self.error_at(
                at,
                "expected a formula; this value needs a comparison (==, <, <=, >, >=, !=)".into(),
            )),
        }
    }

    fn to_term(&self, op: Operand, at: usize) -> Result<Term, ParseError> {
        match op {
            Operand::Term(t, _) => Ok(t),
            Operand::Formula(_) => Err(self.error_at(
                at,
                "expected a number or a value signal, not a formula".into(),
            )),
        }
    }

    fn implies(&mut self) -> Result<Operand, ParseError> {
        let mut lhs = self.or()?;
        while self.peek().tok == Tok::Implies {
            self.i += 1;
            let rhs = self.or()?;
            let (a, b) = (self.to_formula(lhs)?, self.to_formula(rhs)?);
            lhs = Operand::Formula(Formula::Implies(Box::new(a), Box::new(b)));
        }
        Ok(lhs)
    }

    fn or(&mut self) -> Result<Operand, ParseError> {
        let mut lhs = self.and()?;
        while self.peek().tok == Tok::Or {
            self.i += 1;
            let rhs = self.and()?;
            let (a, b) = (self.to_formula(lhs)?, self.to_formula(rhs)?);
            lhs = Operand::Formula(Formula::Or(Box::new(a), Box::new(b)));
        }
        Ok(lhs)
    }

    fn and(&mut self) -> Result<Operand, ParseError> {
        let mut lhs = self.until()?;
        while self.peek().tok == Tok::And {
            self.i += 1;
            let rhs = self.until()?;
            let (a, b) = (self.to_formula(lhs)?, self.to_formula(rhs)?);
            lhs = Operand::Formula(Formula::And(Box::new(a), Box::new(b)));
        }
        Ok(lhs)
    }

    fn until(&mut self) -> Result<Operand, ParseError> {
        let mut lhs = self.unary()?;
        while self.peek().tok == Tok::Ident("U".into()) {
            let interval = self.interval()?;
            let rhs = self.unary()?;
            let (a, b) = (self.to_formula(lhs)?, self.to_formula(rhs)?);
            lhs = Operand::Formula(Formula::Until(interval, Box::new(a), Box::new(b)));
        }
        Ok(lhs)
    }

    /// Consumes an operator keyword and its optional `[lo,hi]`.
    fn interval(&mut self) -> Result<Interval, ParseError> {
        let (line, col) = (self.peek().line, self.peek().col);
        self.i += 1;
        if self.peek().tok != Tok::LBracket {
            return Ok(Interval {
                bounds_s: None,
                line,
                col,
            });
        }
        self.i += 1;
        let lo = self.number("the interval's lower bound (seconds)")?;
        self.expect(&Tok::Comma, "',' between the interval bounds")?;
        let hi = self.number("the interval's upper bound (seconds)")?;
        if lo > hi {
            return Err(self.error_at(
                self.i - 1,
                format!("interval [{lo},{hi}] is empty: lower bound exceeds upper"),
            ));
        }
        self.expect(&Tok::RBracket, "']' after the interval")?;
        Ok(Interval {
            bounds_s: Some((lo, hi)),
            line,
            col,
        })
    }

    fn number(&mut self, what: &str) -> Result<f64, ParseError> {
        match self.peek().tok {
            Tok::Num(n) => {
                self.i += 1;
                Ok(n)
            }
            _ => Err(self.expected(what)),
        }
    }

    fn unary(&mut self) -> Result<Operand, ParseError> {
        let keyword = match &self.peek().tok {
            Tok::Not => {
                self.i += 1;
                let p = self.unary()?;
                return Ok(Operand::Formula(Formula::Not(Box::new(
                    self.to_formula(p)?,
                ))));
            }
            Tok::Ident(s) if matches!(s.as_str(), "G" | "F" | "X") => s.clone(),
            _ => return self.comparison(),
        };
        let interval = self.interval()?;
        let p = self.unary()?;
        let p = Box::new(self.to_formula(p)?);
        Ok(Operand::Formula(match keyword.as_str() {
            "G" => Formula::Always(interval, p),
            "F" => Formula::Eventually(interval, p),
            _ if interval.bounds_s.is_some() => {
                return Err(ParseError {
                    file: self.file.to_string(),
                    line: interval.line,
                    col: interval.col,
                    message: "X takes no interval; use F[a,b] for a bounded delay".into(),
                })
            }
            _ => Formula::Next(p),
        }))
    }

    fn comparison(&mut self) -> Result<Operand, ParseError> {
        let start = self.i;
        let lhs = self.arith()?;
        let Tok::Cmp(cmp) = self.peek().tok else {
            return Ok(lhs);
        };
        self.i += 1;
        let rhs_at = self.i;
        let rhs = self.arith()?;
        let l = self.to_term(lhs, start)?;
        let r = self.to_term(rhs, rhs_at)?;
        if matches!((&l, &r), (Term::Const(_), Term::Const(_))) {
            return Err(self.error_at(start, "a comparison needs at least one signal".into()));
        }
        Ok(Operand::Formula(atom_formula(Atom::new(l, cmp, r))))
    }

    fn arith(&mut self) -> Result<Operand, ParseError> {
        let start = self.i;
        let mut lhs = self.product()?;
        while let Tok::Arith(op @ (super::atom::ArithOp::Add | super::atom::ArithOp::Sub)) =
            self.peek().tok
        {
            self.i += 1;
            let rhs_at = self.i;
            let rhs = self.product()?;
            let (a, b) = (self.to_term(lhs, start)?, self.to_term(rhs, rhs_at)?);
            lhs = Operand::Term(Term::Bin(Box::new(a), op, Box::new(b)), start);
        }
        Ok(lhs)
    }

    fn product(&mut self) -> Result<Operand, ParseError> {
        let start = self.i;
        let mut lhs = self.primary()?;
        while let Tok::Arith(op @ (super::atom::ArithOp::Mul | super::atom::ArithOp::Div)) =
            self.peek().tok
        {
            self.i += 1;
            let rhs_at = self.i;
            let rhs = self.primary()?;
            let (a, b) = (self.to_term(lhs, start)?, self.to_term(rhs, rhs_at)?);
            lhs = Operand::Term(Term::Bin(Box::new(a), op, Box::new(b)), start);
        }
        Ok(lhs)
    }

    fn primary(&mut self) -> Result<Operand, ParseError> {
        let at = self.i;
        match self.peek().tok.clone() {
            Tok::Num(n) => {
                self.i += 1;
                Ok(Operand::Term(Term::Const(n), at))
            }
            Tok::LParen => {
                self.i += 1;
                let inner = self.implies()?;
                self.expect(&Tok::RParen, "')' or an operator")?;
                Ok(inner)
            }
            Tok::Ident(name) => {
                self.i += 1;
                self.name(&name, at)
            }
            _ => Err(self.expected("a signal, a number, a law name, '(' , '~', G, F or X")),
        }
    }

    fn name(&mut self, name: &str, at: usize) -> Result<Operand, ParseError> {
        if let Some(c) = constant(name) {
            return Ok(Operand::Term(Term::Const(c), at));
        }
        match name {
            "true" => return Ok(Operand::Formula(Formula::Const(true))),
            "false" => return Ok(Operand::Formula(Formula::Const(false))),
            _ => {}
        }
        if let Some(sig) = Signal::from_name(name) {
            if sig.kind() == SignalKind::Distance && self.peek().tok == Tok::LParen {
                self.i += 1;
                let d = self.number(&format!("a distance in metres inside {name}(...)"))?;
                self.expect(&Tok::RParen, &format!("')' after the distance of {name}"))?;
                let atom = Atom::new(Term::Signal(sig), Cmp::Le, Term::Const(d));
                return Ok(Operand::Formula(Formula::Atom(atom)));
            }
            return Ok(Operand::Term(Term::Signal(sig), at));
        }
        if UNAVAILABLE.contains(&name) {
            return Err(self.error_at(
                at,
                format!("signal {name} is not available from avguard frames"),
            ));
        }
        if let Some(f) = self.laws.get(name) {
            return Ok(Operand::Formula(f.clone()));
        }
        Err(self.error_at(
            at,
            format!("unknown name '{name}': expected a signal, a constant or an earlier law"),
        ))
    }
}
