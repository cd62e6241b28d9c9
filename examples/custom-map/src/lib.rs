//! A worked example of a feature map that gimc does not have built in, written the way a map
//! author outside the gimc crates would write it: random Fourier features of the **Laplacian
//! kernel** k(x, y) = exp(−γ‖x − y‖₁) ([`LaplaceFourier`]), learnable in their directions like
//! GIMC-LFF, with a [`LaplaceFamily`] (name `llff`) so that model selection can search over its
//! size m and scale γ. Copy this crate, replace the map, keep the structure and the tests.
//!
//! ```
//! use custom_map::LaplaceFourier;
//! use gimc_featmap::{FeatureMap, LearnableMap};
//! use gimc_linalg::FeatureMatrix;
//! use gimc_linalg::faer::Mat;
//! use gimc_linalg::rng::seeded;
//!
//! // tiny data: 4 items with 3 features
//! let x = FeatureMatrix::dense(Mat::from_fn(4, 3, |i, j| (i as f64 - j as f64) / 4.0))?;
//! // m = 8 directions for exp(−0.5‖x − y‖₁), drawn from a seeded generator
//! let map = LaplaceFourier::new(x.ncols(), 8, 0.5, &mut seeded(7))?;
//! let phi = map.forward(&x)?;
//! assert_eq!(phi.shape(), (4, 16)); // n × D with D = 2m
//! assert_eq!(map.params().shape(), (3, 8)); // the learnable directions U (d × m)
//! // the same seed gives the same map
//! assert_eq!(LaplaceFourier::new(3, 8, 0.5, &mut seeded(7))?, map);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What a map author implements, and why
//!
//! GIMC (Algorithm 1 of the paper, DESIGN §3.3) alternates two steps: with the features
//! Φ = φ_U(X) fixed it solves an inductive matrix completion problem, and then it takes an
//! Armijo line-search step on the map's parameters U using the gradient ∂f/∂U. The fitting
//! loops never look inside a map; they only call the two traits of `gimc-featmap`, so any type
//! implementing them can be learned, and a [`MapFamily`](gimc_featmap::MapFamily) makes it
//! available to model selection.
//!
//! ## 1. [`FeatureMap`](gimc_featmap::FeatureMap): the forward pass
//!
//! Required: `input_dim` (d), `output_dim` (D) and `forward` (Φ = φ(X), n × D). What callers
//! rely on, and how this crate meets it:
//!
//! - **Dense and sparse input, kept sparse.** A [`FeatureMatrix`](gimc_linalg::FeatureMatrix)
//!   is a dense faer matrix or a sparse CSR matrix (Bibtex and Delicious are sparse). Go
//!   through its products [`mul_dense`](gimc_linalg::FeatureMatrix::mul_dense) (XU) and
//!   [`tr_mul_dense`](gimc_linalg::FeatureMatrix::tr_mul_dense) (XᵀG), which cost O(nnz(X)·m);
//!   never call `to_dense` on X. Both storages must give the same Φ up to rounding.
//! - **Errors, never panics.** Start with
//!   [`check_input`](gimc_featmap::check_input): a wrong number of columns or a NaN/Inf entry
//!   is a [`FeatMapError`](gimc_featmap::FeatMapError). Constructors reject bad
//!   hyper-parameters (here m = 0 and γ ≤ 0 or non-finite) the same way.
//! - **Determinism.** `forward` draws no random numbers: all randomness happens when the map is
//!   built, from the [`GimcRng`](gimc_linalg::rng::GimcRng) passed in, so the same seed gives
//!   the same map and the same Φ, on any number of threads.
//! - The provided methods (`forward_rows`, `approx_kernel`, `forward_factored`) have correct
//!   defaults; override them only for speed.
//!
//! ## 2. [`LearnableMap`](gimc_featmap::LearnableMap): parameters and the backward pass
//!
//! Required: `params` (U, fixed shape), `set_params` and `backward`.
//!
//! - `set_params` is how the line search tries U − ηg: validate with
//!   [`check_params`](gimc_featmap::check_params) *before* assigning, so that a wrongly shaped
//!   or non-finite U is rejected and leaves the map unchanged.
//! - `backward(x, G)` returns ∂f/∂U for G = ∂f/∂Φ: a vector–Jacobian product. Derive it by
//!   hand for your Φ and compute it with matrix products (here Xᵀ(G_s ∘ cos S − G_c ∘ sin S)),
//!   never a per-row Jacobian. Check G with [`check_grad`](gimc_featmap::check_grad).
//!
//! ## 3. [`MapFamily`](gimc_featmap::MapFamily): what model selection draws
//!
//! Model selection searches a grid of (m, γ) and needs to build a fresh initial map for each
//! point: `build(x, m, γ, rng)`, plus a `name` (the command line offers `gimc-NAME` and
//! `imc-NAME`) and `output_dim(m)`. It must be deterministic given the generator and return an
//! error for m = 0 or a bad γ. [`LaplaceFamily`] is a unit struct forwarding to
//! [`LaplaceFourier::new`].
//!
//! ## 4. Prove it: the conformance suite
//!
//! [`gimc_featmap::conformance`] checks all of the above numerically: shapes on both
//! storages, dense = sparse, determinism (same seed, repeated calls, 1 vs 2 threads), the
//! error of ΦΦᵀ against the exact kernel matrix falling with D (slope about −1/2 for random
//! features), and `backward` against central finite differences plus the `set_params`
//! contract. `tests/conformance.rs` in this crate runs it on [`LaplaceFourier`] against an
//! exact Laplacian kernel matrix it computes itself; run it with
//! `cargo test -p custom-map -- --nocapture` to see the measured values.
//!
//! ## 5. Store it, register it, fit it, ship it
//!
//! [`codec`] implements [`gimc::MapCodec`] for the map (kind `laplace-fourier`: tensor U,
//! metadata m and γ) so that gimc model files store and load it, and [`registry()`] adds the
//! family and the codec to the built-in [`gimc::MapRegistry`]. With those, the map works
//! everywhere a built-in one does: `gimc::select_and_fit` (example `bibtex`, run on the Bibtex
//! data set), `gimc::persist` save and load, and the command line: the binary `gimc-laplace`
//! is `gimc_cli::main_with(custom_map::registry()?)`, i.e. every `gimc` subcommand with
//! `--method gimc-llff` added. `docs/EXTENDING.md` walks through all of it.

pub mod codec;
pub mod laplace;

pub use codec::registry;
pub use laplace::{LaplaceFamily, LaplaceFourier};
