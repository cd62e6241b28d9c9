//! Integration tests of gimc-cluster: k-means inertia monotonicity, blob recovery, dense/sparse
//! agreement, determinism (seed and thread count), restarts and error cases.

#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)]
mod common;
mod kmeans;
