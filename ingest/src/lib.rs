//! `ingest`: the input sources of avguard, below both the live bridge and the batch tools.
//!
//! Tour of the main types, in data-flow order:
//! - [`wire`] holds the prost types of Apollo's message subset (compiled from `ingest/proto/` at build time)
//!   and the descriptor pool that drives the protobuf JSON and text-format mappings.
//! - [`message::SimMessage`] is the closed set of decoded messages; the topic string is matched once in
//!   [`message::SimMessage::decode`]. Each message is converted into plain fields at decode time, so
//!   protobuf types stop here.
//! - [`assemble::Assembler`] turns messages into one [`laws::Frame`] per tick of message time (sample and
//!   hold; duplicates, out-of-order, late messages and time jumps are counted).
//!
//! - [`hdmap::HdMap`] is an Apollo HD map; [`hdmap::tracker::MapTracker`] gives a frame its road fields
//!   from the pose (the assembler holds one when a map is given).
//! - [`record::RecordReader`] reads Cyber RT `.record` files; [`record::import`] feeds their messages
//!   through the same decoders and assembler.
//!
//! The live bridge feeds these from a websocket; the importer feeds them from Cyber RT record files. Neither
//! knows about the other: this crate does no networking.
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod assemble;
pub mod hdmap;
pub mod message;
pub mod record;
pub mod wire;
