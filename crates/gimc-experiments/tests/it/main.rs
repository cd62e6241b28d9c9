//! Integration tests of `gimc-experiments`: report writers, registry, and the binary's CLI.

// Test helpers outside #[test] functions may unwrap.
#![allow(clippy::unwrap_used)]

mod cli;
mod common;
mod experiments;
mod gimc_labels;
mod gimc_table3;
mod mc1;
mod okmf;
mod report;
mod synthetic;
