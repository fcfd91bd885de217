//! `scenarios`: the seeded driving-scenario generator and the HDF5 run-log format.
#![warn(missing_docs)]
