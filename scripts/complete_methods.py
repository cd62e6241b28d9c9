"""Every `gimc complete` method on one real completion task, beside each other, and the same
fits from Python's `gimc.MatrixCompletion`.

The task: yeast's 2,417 x 14 label matrix (0/1), rows with their 103 standardised features and a
constant, columns with identity features (a 14 x 14 identity file); half of the cells observed
(seeded), the other half held out. Each method chooses its λ (and, for the GIMC methods, m, γ and
the iteration count) on --holdout 10 % of the observed cells, refits on all of them and predicts
the held-out half: we report the held-out RMSE, the choice and the wall time of the command, and
the largest difference between the command's and Python's predictions. PU-IMC is scored
separately by scripts/pu_yeast.py (AUC of hidden positives: a PU task has no RMSE).

usage: GIMC_DATA=DIR python complete_methods.py GIMC_BINARY OUT_DIR (needs the gimc Python package)
"""
import json, os, subprocess, sys, time
import numpy as np
from scipy.io import arff

import gimc

data = os.path.join(os.environ.get("GIMC_DATA", "datasets"), "yeast")
gimc_bin, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
rows = []
for part in ("train", "test"):
    d, _ = arff.loadarff(f"{data}/yeast-{part}.arff")
    rows.append(np.array([[float(v.decode()) if isinstance(v, bytes) else float(v) for v in r] for r in d]))
A = np.vstack(rows)
X, T = A[:, :103], A[:, 103:]
X = np.c_[(X - X.mean(0)) / X.std(0), np.ones(len(X))]
n, m = T.shape
Y = np.eye(m)
rng = np.random.default_rng(17)
seen = rng.random((n, m)) < 0.5
obs, ask = np.argwhere(seen), np.argwhere(~seen)
truth = T[~seen]
np.savetxt(f"{out}/x.csv", X, delimiter=",", header=",".join(f"f{j}" for j in range(X.shape[1])), comments="")
np.savetxt(f"{out}/y.csv", Y, delimiter=",", header=",".join(f"c{j}" for j in range(m)), comments="", fmt="%d")
np.savetxt(f"{out}/omega.txt", np.c_[obs, T[seen]], fmt="%d %d %.1f")
np.savetxt(f"{out}/ask.txt", ask, fmt="%d %d")
print(f"yeast labels {n} x {m}: {len(obs)} cells observed, {len(ask)} held out; "
      f"predicting the observed mean gives RMSE {np.sqrt(np.mean((truth - T[seen].mean()) ** 2)):.4f}")

lam = "0.01,0.1,1,10"
gimc_grid = ["--m", "100,200", "--gamma", "0.5*scale,scale,2*scale", "--lambda", "0.1,1", "--iters", "20"]
# Nyström takes m ≤ n landmarks on each side, and the 14 columns bound m (both maps share it)
nys_grid = ["--m", "14", "--gamma", "0.5*scale,scale,2*scale", "--lambda", "0.1,1", "--iters", "20"]
methods = [
    ("mc-als", [], False),
    ("mc-nuclear", ["--lambda", "0.1,1,10"], False),
    ("imc", [], True),
    ("imc-nuclear", ["--lambda", "0.1,1,10"], True),
    ("imc-rff", gimc_grid, True),
    ("imc-nys", nys_grid, True),
    ("gimc-lff", gimc_grid + ["--learn", "rows"], True),
    ("gimc-lnys", nys_grid + ["--learn", "rows"], True),
]
print("| method | held-out RMSE | chosen | `gimc complete` wall (s) | Python wall (s) | max abs(CLI − Python) |")
print("| --- | ---: | --- | ---: | ---: | ---: |")
for method, extra, feats in methods:
    args = extra if "--lambda" in extra else extra + ["--lambda", lam]
    if "--iters" not in args:
        args = args + ["--iters", "30"]
    cmd = [gimc_bin, "-q", "--json", "--seed", "3", "complete", f"{out}/omega.txt", "--method", method,
           "--rank", "5", "--entries", f"{out}/ask.txt"] + args
    if feats:
        cmd += ["--row-features", f"{out}/x.csv", "--col-features", f"{out}/y.csv"]
    t = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.time() - t
    if r.returncode:
        print(f"| {method} | failed: {r.stderr.strip()} |")
        continue
    v = json.loads(r.stdout)
    pred = np.array([p[2] for p in v["predictions"]])
    rmse = np.sqrt(np.mean((pred - truth) ** 2))
    chosen = v.get("chosen") or f"lambda {v['lambda']}"
    # the same fit from Python
    kw = dict(method=method, rank=5, random_state=3)
    grid = dict(zip(args[0::2], args[1::2]))
    kw["alpha"] = [float(x) for x in grid["--lambda"].split(",")]
    kw["max_iter"] = int(grid["--iters"])
    if "--m" in grid:
        kw["m"] = [int(x) for x in grid["--m"].split(",")]
        kw["gamma"] = grid["--gamma"].split(",")
        if "--learn" in grid:
            kw["learn"] = grid["--learn"]
    t = time.time()
    try:
        est = gimc.MatrixCompletion(**kw)
        est.fit(X if feats else None, Y if feats else None, np.c_[obs, T[seen]], shape=T.shape)
        py = est.predict(ask[:, 0], ask[:, 1])
        py_secs = time.time() - t
        diff = f"{np.max(np.abs(py - pred)):.1e}"
    except Exception as e:  # report, do not hide
        py_secs, diff = time.time() - t, f"Python failed: {e}"
    print(f"| {method} | {rmse:.4f} | {chosen} | {secs:.1f} | {py_secs:.1f} | {diff} |", flush=True)
