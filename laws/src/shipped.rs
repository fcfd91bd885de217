//! The law files avguard ships (`laws/specs/`), embedded at build time: the one way tests, benches and
//! tools get the shipped laws without reading the folder themselves.

use crate::lang::lawset::{LawSet, LawSource};

include!(concat!(env!("OUT_DIR"), "/shipped.rs"));

/// Every shipped law file as a source named by its file name, in file-name order (as `--laws laws/specs`
/// reads them).
pub fn sources() -> Vec<LawSource> {
    LAW_FILES
        .iter()
        .map(|(name, text)| LawSource {
            name: (*name).to_owned(),
            text: (*text).to_owned(),
        })
        .collect()
}

/// The shipped laws, parsed.
///
/// # Panics
/// Never for the shipped files: the crate's tests parse them.
pub fn law_set() -> LawSet {
    match LawSet::parse(&sources()) {
        Ok(set) => set,
        Err(e) => panic!("a shipped law file does not parse: {e}"),
    }
}
