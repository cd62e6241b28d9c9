//! Integration tests of `gimc-metrics`: property tests against brute-force references.

// Test helpers outside #[test] functions may unwrap.
#![allow(clippy::unwrap_used)]

mod clustering;
mod ranking;
