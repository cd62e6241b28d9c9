"""PU completion on a real matrix: yeast's 2,417 x 14 label matrix, rows with their 103
features, columns (labels) without. Half of the 1s are observed (seeded); the rest of the 1s
are hidden positives. gimc complete --method pu-imc chooses (lambda, rho) by held-out AUC; we
score the hidden positives against the true 0s (AUC), for the CLI and for Python."""
import json, subprocess, sys, time
import numpy as np
from scipy.io import arff
from sklearn.metrics import roc_auc_score

import os
data = os.path.join(os.environ.get("GIMC_DATA", "datasets"), "yeast")
# usage: GIMC_DATA=DIR python pu_yeast.py GIMC_BINARY OUT_DIR (needs the gimc Python package)
gimc_bin, out = sys.argv[1], sys.argv[2]
rows = []
for part in ("train", "test"):
    d, meta = arff.loadarff(f"{data}/yeast-{part}.arff")
    rows.append(np.array([[float(v) if not isinstance(v, bytes) else float(v.decode()) for v in r] for r in d]))
A = np.vstack(rows)
X, T = A[:, :103], A[:, 103:]
X = (X - X.mean(0)) / X.std(0)
rng = np.random.default_rng(7)
pos = np.argwhere(T == 1)
seen = rng.random(len(pos)) < 0.5
obs, hidden = pos[seen], pos[~seen]
neg = np.argwhere(T == 0)
np.savetxt(f"{out}/x.csv", X, delimiter=",", header=",".join(f"f{j}" for j in range(103)), comments="")
np.savetxt(f"{out}/omega.txt", np.c_[obs, np.ones(len(obs))], fmt="%d %d %.1f")
ask = np.vstack([hidden, neg])
np.savetxt(f"{out}/ask.txt", ask, fmt="%d %d")
truth = np.r_[np.ones(len(hidden)), np.zeros(len(neg))]
print(f"yeast labels: {T.shape}, {len(pos)} positives, {len(obs)} observed, {len(hidden)} hidden, {len(neg)} zeros")
lam, rho = "0.01,0.1,1", "0.2,0.5,0.8"
for method, extra in (("pu-imc", ["--rho", rho]), ("imc", [])):
    t = time.time()
    r = subprocess.run([gimc_bin, "-q", "--json", "--seed", "3", "complete", f"{out}/omega.txt",
                        "--method", method, "--row-features", f"{out}/x.csv", "--rank", "5", "--iters", "30", "--lambda", lam,
                        "--entries", f"{out}/ask.txt"] + extra, capture_output=True, text=True)
    if r.returncode:
        print(r.stderr); sys.exit(1)
    secs = time.time() - t
    v = json.loads(r.stdout)
    pred = np.array([p[2] for p in v["predictions"]])
    chosen = f"lambda {v['lambda']}" + (f", rho {v['rho']}" if "rho" in v else "")
    print(f"CLI {method}: {chosen}; AUC of hidden positives vs zeros {roc_auc_score(truth, pred):.4f}; {secs:.1f} s")
    if method == "pu-imc":
        print("  held-out AUC per (lambda, rho):", [(s["lambda"], s["rho"], round(s["auc"], 4)) for s in v["holdout_auc"]])
        cli_pred = pred
from gimc import MatrixCompletion
t = time.time()
est = MatrixCompletion(method="pu-imc", rank=5, alpha=[0.01, 0.1, 1.0], rho=[0.2, 0.5, 0.8], random_state=3)
est.fit(X, None, np.c_[obs, np.ones(len(obs))], shape=T.shape)
py = est.predict(ask[:, 0], ask[:, 1])
print(f"Python pu-imc: alpha {est.alpha_}, rho {est.rho_}; AUC {roc_auc_score(truth, py):.4f}; {time.time() - t:.1f} s; max |CLI - Python| {np.max(np.abs(py - cli_pred)):.2e}")
