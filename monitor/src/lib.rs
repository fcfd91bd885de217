//! `monitor`: abstraction of frames into bit-string states, DTMC learning, PAC bounds and reachability
//! tables. Does no I/O.
#![warn(missing_docs)]
