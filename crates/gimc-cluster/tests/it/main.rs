//! Integration tests of gimc-cluster: k-means (inertia monotonicity, blobs, dense = sparse,
//! determinism, restarts, errors), mini-batch k-means, kernel k-means (linear kernel = k-means,
//! rings, limit), OKMF (finite-difference gradient, memory independent of n, blobs, rings) and
//! the constraint matrix and spectral step.

#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)]
mod common;
mod kernel_kmeans;
mod kmeans;
mod minibatch;
mod okmf;
mod spectral;
