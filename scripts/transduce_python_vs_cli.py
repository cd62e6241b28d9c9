#!/usr/bin/env python3
"""`gimc transduce` against Python's `gimc.MC1Transducer` on one data file, same seed.

usage: transduce_python_vs_cli.py GIMC_BIN MASKED.arff TRUTH.arff [--method mc1] [--seed 7]

Reads the Mulan ARFF files (features `?` where missing, labels `?` where unknown) with SciPy,
fits MC1Transducer(standardize=False, random_state=SEED) on them, runs `GIMC_BIN --seed SEED
transduce MASKED --standardize false`, and prints both label errors over the unknown label
cells, the chosen λ and μ, and the largest difference between the two score matrices.
"""
import argparse
import io
import subprocess
import time

import numpy as np
from scipy.io import arff

import gimc


def load(path):
    data, meta = arff.loadarff(path)
    names = meta.names()
    feats = [n for n in names if meta[n][0] == "numeric"]
    labels = [n for n in names if meta[n][0] == "nominal"]
    x = np.column_stack([data[n].astype(float) for n in feats])
    y = np.column_stack([
        np.array([np.nan if v in (b"?", "?") else float(v) for v in data[n]]) for n in labels
    ])
    return x, y, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gimc")
    ap.add_argument("masked")
    ap.add_argument("truth")
    ap.add_argument("--method", default="mc1")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    x, y, labels = load(a.masked)
    _, y_true, _ = load(a.truth)
    unknown = np.isnan(y)
    start = time.time()
    model = gimc.MC1Transducer(method=a.method, standardize=False, random_state=a.seed)
    model.fit(x, y)
    py_seconds = time.time() - start
    py_wrong = np.sum((model.decision_ > 0)[unknown] != (y_true[unknown] > 0))
    start = time.time()
    out = subprocess.run(
        [a.gimc, "--seed", str(a.seed), "-q", "transduce", a.masked, "--method", a.method,
         "--standardize", "false"],
        check=True, capture_output=True, text=True).stdout
    cli_seconds = time.time() - start
    table = np.genfromtxt(io.StringIO(out), delimiter=",", skip_header=1, dtype=str)
    rows = table[:, 0].astype(int)
    cli_scores = table[:, 2:].astype(float)
    pred = np.zeros_like(y_true, dtype=bool)
    pred[rows] = cli_scores > 0
    cli_wrong = np.sum(pred[unknown] != (y_true[unknown] > 0))
    cells = int(unknown.sum())
    print(f"Python: λ = {model.alpha_}, μ = {model.mu_:.4e}, label error "
          f"{100 * py_wrong / cells:.4f} % over {cells} cells ({py_seconds:.1f} s)")
    print(f"CLI:    label error {100 * cli_wrong / cells:.4f} % ({cli_seconds:.1f} s)")
    print(f"largest |score difference| over the {len(rows)} predicted rows: "
          f"{np.max(np.abs(model.decision_[rows] - cli_scores)):.3e}")


if __name__ == "__main__":
    main()
