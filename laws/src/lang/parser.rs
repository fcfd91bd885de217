//! Recursive-descent parser for LawBreaker's assertion language.
//!
//! Precedence, loosest first: `->`, `|`, `&`, `U`, then the prefix operators `~`, `G`, `F`, `X` (which
//! bind tightest, so `G a -> b` is `(G a) -> b`), then comparisons, then dotted arithmetic. Binary
//! operators are left-associative and parsed by precedence climbing. Nesting and size are bounded as the
//! tree is built ([`super::limits`]). Each layer works on an `Operand`, which is either a formula or an
//! arithmetic term, so that `(currentLane.number .+ 1) == 0` and `(a | b) & c` both parse; a term used as
//! a formula must be a flag (`isTrafficJam` means `isTrafficJam == 1`) and a distance must be called
//! (`stoplineAhead(2)` means `stoplineAhead <= 2`).

use std::collections::HashMap;

use super::atom::{ArithOp, Atom, Cmp, Term};
use super::error::ParseError;
use super::formula::{Formula, Interval};
use super::lexer::{lex, quoted, Tok, Token};
use super::limits::{MAX_BOUND_S, MAX_DEPTH, MAX_NODES};
use crate::frame::{light_color, planned_turn, turn_signal};
use crate::signals::{Signal, SignalKind, UNAVAILABLE};

/// Either side of the formula/term split, with the depth of its tree (a leaf is 1).
enum Operand {
    Formula(Formula, usize),
    /// A term, where it starts (for "expected a comparison" errors), and its depth.
    Term(Term, usize, usize),
}

impl Operand {
    fn depth(&self) -> usize {
        match self {
            Operand::Formula(_, d) | Operand::Term(_, _, d) => *d,
        }
    }

    /// The depth once used as a formula: a flag term becomes an atom node over it.
    fn formula_depth(&self) -> usize {
        match self {
            Operand::Formula(_, d) => *d,
            Operand::Term(_, _, d) => *d + 1,
        }
    }
}

/// A law defined earlier in the set, with the size of its formula tree.
#[derive(Debug, Clone)]
pub struct KnownLaw {
    formula: Formula,
    depth: usize,
    n_nodes: usize,
}

/// The parser state over one text.
pub struct Parser<'a> {
    toks: Vec<Token>,
    i: usize,
    file: &'a str,
    /// Laws defined earlier; a name used in a formula is replaced by that law's formula.
    laws: HashMap<String, KnownLaw>,
    /// Tree nodes built for the current statement, substituted laws included (bounded by [`MAX_NODES`]).
    n_nodes: usize,
    /// Open parentheses around the current position (bounded by [`MAX_DEPTH`]).
    n_open_parens: usize,
    /// Prefix operators applied to the current position (bounded by [`MAX_DEPTH`]).
    n_open_prefixes: usize,
}

/// A parsed `name = formula;`.
pub struct Statement {
    /// The law's name.
    pub name: String,
    /// Its formula, earlier laws substituted.
    pub formula: Formula,
    /// The statement's byte range in the text.
    pub range: (usize, usize),
    /// 1-based line of the name.
    pub line: usize,
    /// 1-based column of the name.
    pub col: usize,
    /// Depth of the formula's tree (a leaf is 1), at most [`MAX_DEPTH`].
    pub depth: usize,
}

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
        let lhs = p.arith(1)?;
        let atom = if let Tok::Cmp(cmp) = p.peek().tok {
            p.i += 1;
            let rhs = p.arith(1)?;
            match (lhs, rhs) {
                (Operand::Term(l, _, _), Operand::Term(r, _, _)) => Atom::new(l, cmp, r),
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
        laws: HashMap<String, KnownLaw>,
    ) -> Result<Self, ParseError> {
        Ok(Parser {
            toks: lex(file, text)?,
            i: 0,
            file,
            laws,
            n_nodes: 0,
            n_open_parens: 0,
            n_open_prefixes: 0,
        })
    }

    /// Makes `name` usable in later formulas; false when it is already defined.
    pub fn define(&mut self, name: String, formula: Formula, depth: usize) -> bool {
        if self.laws.contains_key(&name) {
            return false;
        }
        let n_nodes = self.n_nodes;
        self.laws.insert(
            name,
            KnownLaw {
                formula,
                depth,
                n_nodes,
            },
        );
        true
    }

    /// Gives back the laws known so far.
    pub fn into_laws(self) -> HashMap<String, KnownLaw> {
        self.laws
    }

    /// Accounts for a new tree node of depth `depth` whose text starts at token `at`: fails when the tree
    /// would be deeper than [`MAX_DEPTH`] or the statement larger than [`MAX_NODES`] nodes. Checked as the
    /// tree is built, so no input makes the parser (or any later recursive pass) exhaust the stack or
    /// memory.
    fn node(&mut self, at: usize, depth: usize, n_nodes: usize) -> Result<usize, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.error_at(
                at,
                format!("formula nested deeper than the limit of {MAX_DEPTH} levels"),
            ));
        }
        self.n_nodes = self.n_nodes.saturating_add(n_nodes);
        if self.n_nodes > MAX_NODES {
            return Err(self.error_at(
                at,
                format!(
                    "law too large: more than {MAX_NODES} operators and operands (earlier laws used by \
                     name count in full)"
                ),
            ));
        }
        Ok(depth)
    }

    /// Fails when `open` (a count of open parentheses or prefix operators) is at [`MAX_DEPTH`]. Bounds
    /// the parser's own recursion before the tree exists: `((((x))))` nests without adding nodes.
    fn check_nesting(&self, open: usize, at: usize) -> Result<(), ParseError> {
        if open >= MAX_DEPTH {
            return Err(self.error_at(
                at,
                format!("formula nested deeper than the limit of {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    /// The depth of a node over children of depths `a` and `b` (see [`Parser::node`]).
    fn join(&mut self, at: usize, a: usize, b: usize) -> Result<usize, ParseError> {
        self.node(at, a.max(b) + 1, 1)
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

    /// Parses `name = formula ;` and returns the name, the formula, the byte range of the statement, its
    /// position, and the depth of the formula's tree.
    pub fn statement(&mut self) -> Result<Statement, ParseError> {
        self.n_nodes = 0;
        let start = self.peek().offset;
        let (line, col) = (self.peek().line, self.peek().col);
        let Tok::Ident(name) = self.peek().tok.clone() else {
            return Err(self.expected("a law name"));
        };
        if is_reserved(&name) {
            return Err(self.error_at(
                self.i,
                format!("{} is reserved and cannot name a law", quoted(&name)),
            ));
        }
        self.i += 1;
        self.expect(&Tok::Assign, "'=' after the law name")?;
        let (formula, depth) = self.formula()?;
        let end = self.peek().offset;
        self.expect(&Tok::Semi, "';' or an operator")?;
        Ok(Statement {
            name,
            formula,
            range: (start, end + 1),
            line,
            col,
            depth,
        })
    }

    /// Parses a whole formula; returns it with the depth of its tree.
    pub fn formula(&mut self) -> Result<(Formula, usize), ParseError> {
        let op = self.binary(1)?;
        let depth = op.depth();
        Ok((self.to_formula(op)?, depth))
    }

    fn to_formula(&self, op: Operand) -> Result<Formula, ParseError> {
        match op {
            Operand::Formula(f, _) => Ok(f),
            Operand::Term(Term::Signal(sig), _, _) if sig.kind() == SignalKind::Flag => Ok(
                Formula::Atom(Atom::new(Term::Signal(sig), Cmp::Eq, Term::Const(1.0))),
            ),
            Operand::Term(Term::Signal(sig), at, _) if sig.kind() == SignalKind::Distance => {
                Err(self.error_at(
                    at,
                    format!(
                        "expected '(' and a distance after {}, e.g. {}(2)",
                        sig.name(),
                        sig.name()
                    ),
                ))
            }
            Operand::Term(_, at, _) => Err(self.error_at(
                at,
                "expected a formula; this value needs a comparison (==, <, <=, >, >=, !=)".into(),
            )),
        }
    }

    fn to_term(&self, op: Operand, at: usize) -> Result<Term, ParseError> {
        match op {
            Operand::Term(t, _, _) => Ok(t),
            Operand::Formula(..) => Err(self.error_at(
                at,
                "expected a number or a value signal, not a formula".into(),
            )),
        }
    }

    /// Binary formula operators at or above precedence `min` (loosest first: `->` 1, `|` 2, `&` 3, `U` 4),
    /// left-associative, by precedence climbing: one function for every level keeps the recursion per
    /// parenthesis short (see [`MAX_DEPTH`]).
    fn binary(&mut self, min: u8) -> Result<Operand, ParseError> {
        let mut lhs = self.unary()?;
        loop {
            let prec = match &self.peek().tok {
                Tok::Implies => 1,
                Tok::Or => 2,
                Tok::And => 3,
                Tok::Ident(u) if u == "U" => 4,
                _ => break,
            };
            if prec < min {
                break;
            }
            let at = self.i;
            let interval = if prec == 4 {
                Some(self.interval()?)
            } else {
                self.i += 1;
                None
            };
            let rhs = self.binary(prec + 1)?;
            lhs = self.combine(at, prec, interval, lhs, rhs)?;
        }
        Ok(lhs)
    }

    /// The node of binary operator `prec` (see [`Parser::binary`]) over `lhs` and `rhs`.
    fn combine(
        &mut self,
        at: usize,
        prec: u8,
        interval: Option<Interval>,
        lhs: Operand,
        rhs: Operand,
    ) -> Result<Operand, ParseError> {
        let depth = self.join(at, lhs.formula_depth(), rhs.formula_depth())?;
        let (a, b) = (
            Box::new(self.to_formula(lhs)?),
            Box::new(self.to_formula(rhs)?),
        );
        let f = match (prec, interval) {
            (1, _) => Formula::Implies(a, b),
            (2, _) => Formula::Or(a, b),
            (3, _) => Formula::And(a, b),
            (_, Some(interval)) => Formula::Until(interval, a, b),
            (_, None) => unreachable!("`binary` reads the interval of every U"),
        };
        Ok(Operand::Formula(f, depth))
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
        let lo_at = self.i;
        let lo = self.number("the interval's lower bound (seconds)")?;
        self.expect(&Tok::Comma, "',' between the interval bounds")?;
        let hi_at = self.i;
        let hi = self.number("the interval's upper bound (seconds)")?;
        for (bound, at) in [(lo, lo_at), (hi, hi_at)] {
            if bound < 0.0 {
                return Err(self.error_at(
                    at,
                    format!(
                        "interval [{lo},{hi}] has a negative bound: laws look forward from each frame, \
                         bounds must be in [0, {MAX_BOUND_S}] s"
                    ),
                ));
            }
            if bound > MAX_BOUND_S {
                return Err(self.error_at(
                    at,
                    format!(
                        "interval bound {bound} s exceeds the limit of {MAX_BOUND_S} s (one hour)"
                    ),
                ));
            }
        }
        if lo > hi {
            return Err(self.error_at(
                hi_at,
                format!("interval [{lo},{hi}] is reversed: the lower bound exceeds the upper"),
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
        let at = self.i;
        let interval = match &self.peek().tok {
            Tok::Not => {
                self.i += 1;
                None
            }
            Tok::Ident(s) if matches!(s.as_str(), "G" | "F" | "X") => Some(self.interval()?),
            _ => return self.comparison(),
        };
        self.check_nesting(self.n_open_prefixes, at)?;
        self.n_open_prefixes += 1;
        let p = self.unary();
        self.n_open_prefixes -= 1;
        self.prefixed(at, interval, p?)
    }

    /// The node of the prefix operator at token `at` over `p`: `~` when `interval` is `None`, else the
    /// temporal keyword that [`Parser::interval`] consumed.
    fn prefixed(
        &mut self,
        at: usize,
        interval: Option<Interval>,
        p: Operand,
    ) -> Result<Operand, ParseError> {
        let depth = self.node(at, p.formula_depth() + 1, 1)?;
        let p = Box::new(self.to_formula(p)?);
        let Some(interval) = interval else {
            return Ok(Operand::Formula(Formula::Not(p), depth));
        };
        let formula = match &self.toks.get(at).map(|t| &t.tok) {
            Some(Tok::Ident(k)) if k == "G" => Formula::Always(interval, p),
            Some(Tok::Ident(k)) if k == "F" => Formula::Eventually(interval, p),
            _ if interval.bounds_s.is_some() => {
                return Err(ParseError {
                    file: self.file.to_string(),
                    line: interval.line,
                    col: interval.col,
                    message: "X takes no interval; use F[a,b] for a bounded delay".into(),
                })
            }
            _ => Formula::Next(p),
        };
        Ok(Operand::Formula(formula, depth))
    }

    fn comparison(&mut self) -> Result<Operand, ParseError> {
        let start = self.i;
        let lhs = self.arith(1)?;
        let Tok::Cmp(cmp) = self.peek().tok else {
            return Ok(lhs);
        };
        self.i += 1;
        let rhs_at = self.i;
        let rhs = self.arith(1)?;
        self.atom(start, lhs, cmp, rhs_at, rhs)
    }

    /// The comparison `lhs cmp rhs` (the operands start at tokens `start` and `rhs_at`).
    fn atom(
        &mut self,
        start: usize,
        lhs: Operand,
        cmp: Cmp,
        rhs_at: usize,
        rhs: Operand,
    ) -> Result<Operand, ParseError> {
        let depth = lhs.depth().max(rhs.depth()) + 1;
        let l = self.to_term(lhs, start)?;
        let r = self.to_term(rhs, rhs_at)?;
        if matches!((&l, &r), (Term::Const(_), Term::Const(_))) {
            return Err(self.error_at(start, "a comparison needs at least one signal".into()));
        }
        let f = atom_formula(Atom::new(l, cmp, r));
        // The canonical form of `>`, `>=` and `!=` is a negation over the atom.
        let depth = depth + usize::from(matches!(f, Formula::Not(_)));
        self.node(start, depth, 2)?;
        Ok(Operand::Formula(f, depth))
    }

    /// Dotted arithmetic at or above precedence `min` (`.+ .-` 1, `.* ./` 2), left-associative.
    fn arith(&mut self, min: u8) -> Result<Operand, ParseError> {
        let start = self.i;
        let mut lhs = self.primary()?;
        while let Tok::Arith(op) = self.peek().tok {
            let prec = match op {
                ArithOp::Add | ArithOp::Sub => 1,
                ArithOp::Mul | ArithOp::Div => 2,
            };
            if prec < min {
                break;
            }
            self.i += 1;
            let rhs_at = self.i;
            let rhs = self.arith(prec + 1)?;
            let depth = self.join(rhs_at, lhs.depth(), rhs.depth())?;
            let (a, b) = (self.to_term(lhs, start)?, self.to_term(rhs, rhs_at)?);
            lhs = Operand::Term(Term::Bin(Box::new(a), op, Box::new(b)), start, depth);
        }
        Ok(lhs)
    }

    fn primary(&mut self) -> Result<Operand, ParseError> {
        let at = self.i;
        match &self.peek().tok {
            Tok::LParen => {
                self.i += 1;
                self.check_nesting(self.n_open_parens, at)?;
                self.n_open_parens += 1;
                let inner = self.binary(1);
                self.n_open_parens -= 1;
                let inner = inner?;
                self.expect(&Tok::RParen, "')' or an operator")?;
                Ok(inner)
            }
            Tok::Num(_) | Tok::Ident(_) => self.leaf(at),
            _ => Err(self.expected("a signal, a number, a law name, '(' , '~', G, F or X")),
        }
    }

    /// A number or a name at token `at`.
    fn leaf(&mut self, at: usize) -> Result<Operand, ParseError> {
        self.i += 1;
        match self.toks.get(at).map(|t| t.tok.clone()) {
            Some(Tok::Num(n)) => {
                self.node(at, 1, 1)?;
                Ok(Operand::Term(Term::Const(n), at, 1))
            }
            Some(Tok::Ident(name)) => self.name(&name, at),
            _ => unreachable!("`primary` calls `leaf` on a number or a name only"),
        }
    }

    fn name(&mut self, name: &str, at: usize) -> Result<Operand, ParseError> {
        if let Some(c) = constant(name) {
            self.node(at, 1, 1)?;
            return Ok(Operand::Term(Term::Const(c), at, 1));
        }
        match name {
            "true" | "false" => {
                self.node(at, 1, 1)?;
                return Ok(Operand::Formula(Formula::Const(name == "true"), 1));
            }
            _ => {}
        }
        if let Some(sig) = Signal::from_name(name) {
            if sig.kind() == SignalKind::Distance && self.peek().tok == Tok::LParen {
                self.i += 1;
                let d = self.number(&format!("a distance in metres inside {name}(...)"))?;
                self.expect(&Tok::RParen, &format!("')' after the distance of {name}"))?;
                // The atom and its two terms.
                self.node(at, 2, 3)?;
                let atom = Atom::new(Term::Signal(sig), Cmp::Le, Term::Const(d));
                return Ok(Operand::Formula(Formula::Atom(atom), 2));
            }
            self.node(at, 1, 1)?;
            return Ok(Operand::Term(Term::Signal(sig), at, 1));
        }
        if UNAVAILABLE.contains(&name) {
            return Err(self.error_at(
                at,
                format!("signal {name} is not available from avguard frames"),
            ));
        }
        if let Some((depth, n_nodes)) = self.laws.get(name).map(|k| (k.depth, k.n_nodes)) {
            // Account before cloning, so that a law used many times cannot blow up memory.
            self.node(at, depth, n_nodes)?;
            if let Some(known) = self.laws.get(name) {
                return Ok(Operand::Formula(known.formula.clone(), depth));
            }
        }
        Err(self.error_at(
            at,
            format!(
                "unknown name {}: expected a signal, a constant or an earlier law",
                quoted(name)
            ),
        ))
    }
}
