"""Type stubs of the Rust extension module gimc._gimc (stateless functions)."""

from typing import Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

Csr = Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64], int, int]
Indicator = Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int, int]
Features = Union[npt.NDArray[np.float64], Csr]

def fit_labels(
    x: Features,
    classes: Optional[npt.NDArray[np.int64]],
    n_classes: int,
    labels: Optional[Indicator],
    map: str,
    m: Sequence[int],
    gamma: Sequence[str],
    alpha: Sequence[float],
    max_iter: int,
    validation_fraction: float,
    select_k: int,
    seed: int,
    standardize: str,
    normalize: str,
    n_jobs: Optional[int] = None,
    storage: str = "auto",
    block_rows: int = 0,
    precision: str = "float64",
    patience: Optional[int] = None,
) -> Tuple[bytes, dict]: ...
def fit_auto(
    x: Features,
    classes: Optional[npt.NDArray[np.int64]],
    n_classes: int,
    labels: Optional[Indicator],
    gamma: Optional[Sequence[str]],
    alpha: Optional[Sequence[float]],
    m: Optional[int],
    max_iter: Optional[int],
    normalize: Optional[str],
    patience: Optional[int],
    validation_fraction: float,
    select_k: Optional[int],
    seed: int,
    n_jobs: Optional[int] = None,
) -> Tuple[bytes, dict]: ...
def fit_clusters(
    x: Features,
    pairs: npt.NDArray[np.float64],
    k: int,
    map: str,
    m: int,
    gamma: str,
    alpha: Sequence[float],
    max_iter: int,
    seed: int,
    standardize: str,
    normalize: str,
    n_jobs: Optional[int] = None,
) -> Tuple[npt.NDArray[np.int64], dict]: ...
def fit_okmf(
    x: Features,
    k: int,
    budget_size: int,
    gamma: str,
    epochs: int,
    batch_size: int,
    seed: int,
    standardize: str,
    normalize: str,
    n_jobs: Optional[int] = None,
) -> Tuple[npt.NDArray[np.int64], dict]: ...
def okmf_predict(
    x: Features,
    budget: npt.NDArray[np.float64],
    w: npt.NDArray[np.float64],
    gamma: float,
    lambda_: float,
    alpha: float,
    mean: Optional[Sequence[float]],
    scale: Optional[Sequence[float]],
    center: bool,
    normalize: str,
) -> npt.NDArray[np.int64]: ...
def fit_completion(
    method: str,
    x_rows: Optional[Features],
    n_rows: int,
    x_cols: Optional[Features],
    n_cols: int,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    values: npt.NDArray[np.float64],
    rank: int,
    alpha: Sequence[float],
    holdout: float,
    rho: Sequence[float],
    max_iter: int,
    seed: int,
    n_jobs: Optional[int] = None,
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], dict]: ...
def fit_gimc_completion(
    map: str,
    learn: str,
    x_rows: Features,
    x_cols: Features,
    rows: npt.NDArray[np.int64],
    cols: npt.NDArray[np.int64],
    values: npt.NDArray[np.float64],
    ms: Sequence[int],
    gammas: Sequence[str],
    alpha: Sequence[float],
    rank: int,
    max_iter: int,
    holdout: float,
    seed: int,
    n_jobs: Optional[int] = None,
    patience: Optional[int] = None,
) -> Tuple[bytes, npt.NDArray[np.float64], npt.NDArray[np.float64], dict]: ...
def completion_factors(model: bytes, x: Features, side: str) -> npt.NDArray[np.float64]: ...
def transduce(
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    method: str,
    lambdas: Sequence[float],
    folds: int,
    mu_count: int,
    max_stage_iters: int,
    standardize: bool,
    seed: int,
    n_jobs: Optional[int] = None,
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], dict]: ...
def decision_function(model: bytes, x: Features) -> npt.NDArray[np.float64]: ...
def top_k(model: bytes, x: Features, k: int) -> npt.NDArray[np.int64]: ...
def model_info(model: bytes) -> dict: ...
def precision_at_k(scores: npt.NDArray[np.float64], truth_csr: Indicator, k: int) -> float: ...
def ndcg_at_k(scores: npt.NDArray[np.float64], truth_csr: Indicator, k: int) -> float: ...
def gamma_scale(x: Features) -> float: ...
def sparse_buffer_addresses(x: Features) -> tuple[int, int, int] | None: ...
def load_named(name: str, part: str, data_dir: Optional[str] = None) -> dict: ...
def load_file(path: str, labels: Optional[str] = None) -> dict: ...
