//! Integration tests of gimc-featmap: shapes, seed determinism, dense = sparse, forward against
//! reference formulas, kernel-approximation rates (RFF slope ≈ −1/2, Nyström exact with every
//! point a landmark), backward against central finite differences on dense and sparse input,
//! the conformance suite on every built-in map and on deliberately broken user maps, and error
//! cases.

#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)]
mod backward;
mod common;
mod conformance;
mod kernels;
mod maps;
