//! What the AV domain understands of a predicate's text: threshold atoms over one signal.
//!
//! The laws crate evaluates predicates; the AV domain only needs their *meaning* to state validity rules.
//! A threshold atom compares one law signal with a constant — `speed < 0.5`, `NPCAhead(10)` (LawBreaker's
//! shorthand for `NPCAhead <= 10`), `trafficLightAhead.color == yellow`. Anything else (boolean signals
//! such as `collision` or `PriorityNPCAhead`, window predicates, compound formulas) is [`Atom::Other`] and
//! takes part in no rule.

/// Comparison operator of a threshold atom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

impl Cmp {
    /// Whether `x CMP c` holds.
    pub fn holds(self, x: f64, c: f64) -> bool {
        match self {
            Cmp::Lt => x < c,
            Cmp::Le => x <= c,
            Cmp::Gt => x > c,
            Cmp::Ge => x >= c,
            Cmp::Eq => x == c,
            Cmp::Ne => x != c,
        }
    }
}

/// A predicate as the AV domain sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Atom {
    /// `signal CMP value`.
    Threshold {
        /// Signal name with whitespace removed and LawBreaker's dot-less spelling normalised.
        signal: String,
        /// Operator.
        cmp: Cmp,
        /// Constant (colour and direction names mapped to their numbers).
        value: f64,
    },
    /// Any other predicate.
    Other,
}

/// The canonical name of the traffic-light colour signal.
pub const LIGHT_COLOR: &str = "trafficLightAhead.color";
/// The canonical name of the ego speed signal (km/h).
pub const SPEED: &str = "speed";

fn constant(text: &str) -> Option<f64> {
    match text {
        "red" => Some(1.0),
        "yellow" => Some(2.0),
        "green" => Some(3.0),
        "left" => Some(1.0),
        "right" => Some(2.0),
        _ => text.parse::<f64>().ok().filter(|v| v.is_finite()),
    }
}

fn signal_name(text: &str) -> Option<String> {
    let ok = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
        && text.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    ok.then(|| match text {
        "trafficLightAheadcolor" => LIGHT_COLOR.to_string(),
        other => other.to_string(),
    })
}

impl Atom {
    /// Classifies a predicate text.
    pub fn parse(text: &str) -> Atom {
        let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        // Two-character operators first, so `<=` is not read as `<`.
        for (op, cmp) in [
            ("<=", Cmp::Le),
            (">=", Cmp::Ge),
            ("==", Cmp::Eq),
            ("!=", Cmp::Ne),
            ("<", Cmp::Lt),
            (">", Cmp::Gt),
        ] {
            if let Some((lhs, rhs)) = t.split_once(op) {
                return match (signal_name(lhs), constant(rhs)) {
                    (Some(signal), Some(value)) => Atom::Threshold { signal, cmp, value },
                    _ => Atom::Other,
                };
            }
        }
        // Distance shorthand `NPCAhead(10)` = `NPCAhead <= 10`.
        if let Some(inner) = t.strip_suffix(')') {
            if let Some((name, arg)) = inner.split_once('(') {
                if let (Some(signal), Some(value)) = (signal_name(name), constant(arg)) {
                    return Atom::Threshold {
                        signal,
                        cmp: Cmp::Le,
                        value,
                    };
                }
            }
        }
        Atom::Other
    }
}
