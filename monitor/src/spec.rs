//! Which properties are monitored and which predicates make up each one's abstraction.
//!
//! A monitored property is a law whose violation is unsafe plus the predicates of its abstraction. By
//! default ([`PropertySpec::for_law`]) those are the law's own atoms plus its "violated in window"
//! predicate `L.w`, which is also the unsafe predicate. A `properties.toml` (parsed by
//! [`parse_properties_toml`]; the caller reads the file) can instead list, per property:
//!
//! ```toml
//! [[property]]
//! name = "no_collision"          # property name (defaults to the law's name)
//! law = "no_collision"           # the law whose violation is unsafe
//! related_laws = ["law52"]       # their atoms and `R.w` join the abstraction (the paper's scenario_law_map)
//! extra_atoms = ["NPCAhead(10)", "PriorityNPCAhead", "speed > 30"]   # any law-language atom, or an
//!                                # obligation predicate `L.pending` / `L.pending > 1.5` ([`pending`])
//! law_atoms = false              # leave the law's own atoms out (default true)
//! unsafe = "collision"           # an atom that is the unsafe event instead of the law's verdict
//! ```
//!
//! **How k bounds the states.** With k predicates (the unsafe one included) the abstraction has `2^k`
//! bit-string states plus one "run finished" state: `2^k + 1` ids, fewer valid ones once the AV validity
//! rules remove impossible combinations (see [`crate::av`]). Every property is capped at
//! [`MAX_PROPERTY_PREDICATES`] = 12 predicates (at most 4097 states) so learning and solving stay fast.
//!
//! Predicate texts are canonical law-language atoms (`NPCAhead<=10`, `speed<=30`; `speed > 30` and
//! `speed <= 30` are one predicate), `L.w`, or obligation predicates (`L.pending`, `L.pending>1.5`); the
//! unsafe predicate is bit 0.

use serde::Deserialize;

use laws::{Atom, LawSet};

use crate::error::ModelError;

pub mod pending;
#[cfg(test)]
mod tests;

pub use pending::PendingPredicate;

/// Most predicates one property may have (2^12 + 1 = 4097 state ids).
pub const MAX_PROPERTY_PREDICATES: usize = 12;

/// Suffix of a "violated in window" predicate: `law38.w`.
pub const WINDOW_SUFFIX: &str = ".w";

/// One monitored property as declared (before its predicates are resolved against the laws).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PropertySpec {
    /// Property name; defaults to the law's name.
    #[serde(default)]
    pub name: Option<String>,
    /// The law whose violation is unsafe.
    pub law: String,
    /// Laws whose atoms and window predicates join the abstraction.
    #[serde(default)]
    pub related_laws: Vec<String>,
    /// Extra law-language atoms.
    #[serde(default)]
    pub extra_atoms: Vec<String>,
    /// Whether the law's own atoms are predicates (default true).
    #[serde(default = "yes")]
    pub law_atoms: bool,
    /// An atom whose truth is the unsafe event, instead of the law's violation verdict.
    #[serde(default, rename = "unsafe")]
    pub unsafe_atom: Option<String>,
}

fn yes() -> bool {
    true
}

/// Longest property name, bytes.
pub const MAX_PROPERTY_NAME_BYTES: usize = 128;

/// Why `name` cannot name a property, or `None` when it can. A property's name names files (`export`
/// writes `DIR/NAME.tra`; reports name properties in their paths), so it must be a plain file-name
/// stem: 1–[`MAX_PROPERTY_NAME_BYTES`] ASCII letters, digits, `_`, `-` or `.`, not starting with `.`
/// (no path separators, no `..`, no hidden or empty names). Every shipped law name is one.
pub fn property_name_problem(name: &str) -> Option<String> {
    let shown: String = name.chars().take(40).collect();
    let shown = if shown.len() < name.len() {
        format!("{shown:?}…")
    } else {
        format!("{shown:?}")
    };
    if name.is_empty() {
        return Some("a property name may not be empty".into());
    }
    if name.len() > MAX_PROPERTY_NAME_BYTES {
        return Some(format!(
            "property name {shown} is {} bytes long, above the limit of {MAX_PROPERTY_NAME_BYTES}",
            name.len()
        ));
    }
    if name.starts_with('.')
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return Some(format!(
            "property name {shown} must be ASCII letters, digits, '_', '-' or '.', not starting with \
             '.' (it names the property's files)"
        ));
    }
    None
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PropertiesFile {
    #[serde(default)]
    property: Vec<PropertySpec>,
}

/// A property with its predicates resolved: what learning and the runtime both use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedProperty {
    /// Property name.
    pub name: String,
    /// Its law.
    pub law: String,
    /// Predicate texts, bit 0 (the unsafe predicate) first.
    pub predicates: Vec<String>,
    /// Index of the unsafe predicate (always 0 for resolved specs).
    pub unsafe_bit: usize,
}

impl PropertySpec {
    /// The default property of law `law`: its atoms plus `law.w` (unsafe).
    pub fn for_law(law: &str) -> PropertySpec {
        PropertySpec {
            name: None,
            law: law.to_string(),
            related_laws: Vec::new(),
            extra_atoms: Vec::new(),
            law_atoms: true,
            unsafe_atom: None,
        }
    }

    /// The property name.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.law)
    }

    /// Resolves the predicates against `laws`.
    ///
    /// # Errors
    /// [`ModelError::Property`]: unknown law or related law, an atom that does not parse, or more than
    /// [`MAX_PROPERTY_PREDICATES`] predicates.
    pub fn resolve(&self, laws: &LawSet) -> Result<ResolvedProperty, ModelError> {
        let err = |reason: String| ModelError::Property {
            property: self.name().to_string(),
            reason,
        };
        if let Some(reason) = property_name_problem(self.name()) {
            return Err(err(reason));
        }
        let law_index = laws
            .index_of(&self.law)
            .ok_or_else(|| err(format!("unknown law '{}'", self.law)))?;
        let mut preds: Vec<String> = Vec::new();
        let push = |text: String, preds: &mut Vec<String>| {
            if !preds.contains(&text) {
                preds.push(text);
            }
        };
        let unsafe_text = match &self.unsafe_atom {
            Some(text) => canonical_atom(text).map_err(&err)?,
            None => format!("{}{WINDOW_SUFFIX}", self.law),
        };
        push(unsafe_text, &mut preds);
        if self.law_atoms {
            for a in laws.laws()[law_index].atoms() {
                push(a.to_string(), &mut preds);
            }
        }
        for related in &self.related_laws {
            let i = laws
                .index_of(related)
                .ok_or_else(|| err(format!("unknown related law '{related}'")))?;
            for a in laws.laws()[i].atoms() {
                push(a.to_string(), &mut preds);
            }
            push(format!("{related}{WINDOW_SUFFIX}"), &mut preds);
        }
        for text in &self.extra_atoms {
            let canonical = match PendingPredicate::parse(text) {
                Some(pending) => pending.and_then(|p| p.check(laws).map(|()| p.canonical())),
                None => canonical_atom(text),
            };
            push(canonical.map_err(&err)?, &mut preds);
        }
        if preds.len() > MAX_PROPERTY_PREDICATES {
            return Err(err(format!(
                "{} predicates, more than the {MAX_PROPERTY_PREDICATES} allowed (2^k + 1 states): {}",
                preds.len(),
                preds.join(", ")
            )));
        }
        Ok(ResolvedProperty {
            name: self.name().to_string(),
            law: self.law.clone(),
            predicates: preds,
            unsafe_bit: 0,
        })
    }
}

/// The canonical text of a law-language atom (`speed > 30` → `speed<=30`, `NPCAhead(10)` → `NPCAhead<=10`).
///
/// # Errors
/// The text is not one atom; the message names the parse error.
pub fn canonical_atom(text: &str) -> Result<String, String> {
    let atom = Atom::parse(text).map_err(|e| format!("atom '{text}': {e}"))?;
    Ok(atom.canonical().0.to_string())
}

/// Parses a `properties.toml` text (see the module docs).
///
/// # Errors
/// [`ModelError::Config`] for malformed TOML, unknown keys or duplicate property names.
pub fn parse_properties_toml(text: &str) -> Result<Vec<PropertySpec>, ModelError> {
    let file: PropertiesFile = toml::from_str(text).map_err(|e| {
        // toml's own text quotes the line under a caret over several lines; errors here are one line.
        let place = e.span().map_or(String::new(), |span| {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {col}: ")
        });
        ModelError::Config(format!(
            "properties file: {place}{}",
            e.message().trim().replace('\n', " ")
        ))
    })?;
    for (i, p) in file.property.iter().enumerate() {
        if let Some(reason) = property_name_problem(p.name()) {
            return Err(ModelError::Config(format!("properties file: {reason}")));
        }
        if file.property[..i].iter().any(|q| q.name() == p.name()) {
            return Err(ModelError::Config(format!(
                "properties file: property '{}' is declared twice",
                p.name()
            )));
        }
    }
    if file.property.is_empty() {
        return Err(ModelError::Config(
            "properties file declares no [[property]]".into(),
        ));
    }
    Ok(file.property)
}

/// The default properties of a law set: one per law, in order, keeping those within
/// [`MAX_PROPERTY_PREDICATES`]. Returns the kept ones and the names of the laws left out.
pub fn default_properties(laws: &LawSet) -> (Vec<ResolvedProperty>, Vec<String>) {
    let mut kept = Vec::new();
    let mut skipped = Vec::new();
    for law in laws.laws() {
        match PropertySpec::for_law(law.name()).resolve(laws) {
            Ok(p) => kept.push(p),
            Err(_) => skipped.push(law.name().to_string()),
        }
    }
    (kept, skipped)
}

/// Resolves every spec.
///
/// # Errors
/// The first spec that does not resolve.
pub fn resolve_all(
    specs: &[PropertySpec],
    laws: &LawSet,
) -> Result<Vec<ResolvedProperty>, ModelError> {
    specs.iter().map(|s| s.resolve(laws)).collect()
}
