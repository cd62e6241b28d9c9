"""gimc's estimators beside scikit-learn's kernel approximations, in one Python process.

On Bibtex and Delicious (the Mulan splits, read by ``gimc.datasets``), at the same γ, λ and m:

- scikit-learn: ``RBFSampler(n_components=2m) + Ridge`` and ``Nystroem(n_components=m) + Ridge``
  (no intercept; the label matrix densified, as Ridge needs);
- gimc: ``GIMCClassifier(map="rff")`` (the paired cos / sin map of GIMC eq. 6, 2m features),
  ``GIMCClassifier(map="nys")``, and GIMC-LFF, ``GIMCClassifier(map="lff")``, which learns the
  Fourier directions (``max_iter`` outer iterations, the count chosen on its validation split).

A GIMCClassifier fit is always a selection: it fits on 80 % of the training rows, scores the
other 20 % and refits on all rows, so with one setting it does about 1.8 fits' work where
scikit-learn's pipelines do one; the times below include that. Fit seconds are from loaded
data to a fitted model (median over the seeds), P@k (%) on the test part (mean over the seeds).

usage: GIMC_DATA=DIR python bench_sklearn.py [--seeds 3] [--sets bibtex,delicious]
       [--lff-iters 10] [--json OUT]
"""

import argparse
import json
import statistics
import time

import numpy as np
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.linear_model import Ridge

from gimc import GIMCClassifier
from gimc.datasets import load_dataset
from gimc.metrics import precision_at_k

# (γ for the Fourier maps, γ for Nyström, λ), m = 500: the settings of `cargo xtask bench`'s
# kernel-ridge-peers entry (docs/BENCHMARKS.md), DESIGN §3.3's γ
SETTINGS = {
    "bibtex": dict(gamma_rff=0.002, gamma_nys=0.005, alpha=0.1, m=500, lff_alpha=1.0),
    "delicious": dict(gamma_rff=0.056, gamma_nys=0.056, alpha=1.0, m=500, lff_alpha=1.0),
}


def timed(fit):
    t0 = time.perf_counter()
    model = fit()
    return model, time.perf_counter() - t0


def sklearn_pipeline(sampler, alpha, X, Y):
    def fit():
        F = sampler.fit_transform(X)
        return sampler, Ridge(alpha=alpha, fit_intercept=False).fit(F, Y)

    return fit


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--sets", default="bibtex,delicious")
    p.add_argument("--lff-iters", type=int, default=10)
    p.add_argument("--json", default=None)
    a = p.parse_args()
    rows = []
    for name in a.sets.split(","):
        s = SETTINGS[name]
        Xtr, Ytr = load_dataset(name, "train", return_X_y=True)
        Xte, Yte = load_dataset(name, "test", return_X_y=True)
        Ydense = Ytr.toarray().astype(np.float64)
        m, alpha = s["m"], s["alpha"]
        methods = {
            "scikit-learn RBFSampler(2m) + Ridge": lambda seed: sklearn_pipeline(
                RBFSampler(gamma=s["gamma_rff"], n_components=2 * m, random_state=seed),
                alpha, Xtr, Ydense),
            "scikit-learn Nystroem(m) + Ridge": lambda seed: sklearn_pipeline(
                Nystroem(gamma=s["gamma_nys"], n_components=m, random_state=seed),
                alpha, Xtr, Ydense),
            "gimc GIMCClassifier(map='rff')": lambda seed: lambda: GIMCClassifier(
                map="rff", m=m, gamma=s["gamma_rff"], alpha=alpha, max_iter=0,
                random_state=seed).fit(Xtr, Ytr),
            "gimc GIMCClassifier(map='nys')": lambda seed: lambda: GIMCClassifier(
                map="nys", m=m, gamma=s["gamma_nys"], alpha=alpha, max_iter=0,
                random_state=seed).fit(Xtr, Ytr),
            f"gimc GIMC-LFF, GIMCClassifier(map='lff', max_iter={a.lff_iters})": lambda seed: lambda: GIMCClassifier(
                map="lff", m=m, gamma=s["gamma_rff"], alpha=s["lff_alpha"], max_iter=a.lff_iters,
                random_state=seed).fit(Xtr, Ytr),
        }
        for method, make in methods.items():
            times, pks = [], []
            for seed in range(a.seeds):
                model, seconds = timed(make(seed))
                if isinstance(model, tuple):
                    sampler, ridge = model
                    scores = ridge.predict(sampler.transform(Xte))
                else:
                    scores = model.decision_function(Xte)
                times.append(seconds)
                pks.append([100 * precision_at_k(Yte, scores, k) for k in (1, 3, 5)])
            pk = np.mean(pks, axis=0)
            row = dict(set=name, method=method, fit_s=statistics.median(times),
                       p1=pk[0], p3=pk[1], p5=pk[2], seeds=a.seeds)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print("| set | method | fit (s) | P@1 | P@3 | P@5 |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['set']} | {r['method']} | {r['fit_s']:.2f} | {r['p1']:.2f} | {r['p3']:.2f} | {r['p5']:.2f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
