//! Integration tests of gimc-solvers: planted-solution recovery for IMC, MC-ALS, nuclear-norm
//! MC / IMC and PU-IMC; monotone objectives (proptest); the fully-observed fast path against the
//! general path; closed-form linear solvers against brute force; SVM / logistic regression
//! accuracy and monotone objectives; typed parameter errors.

#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)]
mod common;
mod errors;
mod imc;
mod imc_frozen;
mod linear;
mod mc;
mod nuclear;
mod planted_pu;
mod pu;
mod sharded;
mod transduction;
