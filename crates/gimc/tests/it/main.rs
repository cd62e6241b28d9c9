//! Integration tests of `gimc` (one binary, DESIGN §2 conventions).
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

mod auto;
mod checksum;
mod common;
mod complete;
mod equivalence;
mod fitting;
mod gradients;
mod label_columns;
mod linear;
mod mccc;
mod memory;
mod persist;
mod persist_transforms;
#[path = "../../../gimc-solvers/tests/it/planted_pu.rs"]
mod planted_pu;
mod select;
mod semisup;
mod streamed;
