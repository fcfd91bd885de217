//! The law language: tokens, atoms, formulas, the parser, and law sets.

pub mod atom;
pub mod error;
pub mod formula;
pub mod lawset;
pub mod lexer;
pub mod limits;
pub mod parser;

#[cfg(test)]
mod tests;
