//! Integration tests of gimc-linalg: what the crate promises (CG, the sampled
//! product kernel, truncated SVD, thread-count independence, dense/sparse agreement, kernel
//! blocks, the Nyström square root, typed errors).

#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)]
mod cg_solve;
mod common;
mod errors;
mod features;
mod kernels_eig;
mod observed;
mod svd;
