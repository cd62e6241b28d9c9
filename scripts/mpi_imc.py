"""IMC-ALS on a partial Ω under MPI against one process, on a real label matrix:

- yeast: 2,417 x 14 (0/1), rows with their 103 standardised features and a constant (CSV),
  columns with identity features (a 14 x 14 identity file, so the model can be saved and W
  compared); half of the cells observed, the other half held out; rank 5, λ 1, 30 iterations;
- delicious: 16,105 x 983, rows with their 500 binary features and a constant (dense CSV, so
  that the W-steps are preconditioned and their CG converges; stored sparse, `--sparse`, CG
  runs to its 50-iteration cap at every W-step and the two runs' unconverged iterates differ
  by far more than rounding), identity columns (no file: the H-step is the exact row-wise
  solve); a tenth of the cells observed, 2 % held out; rank 10, λ 1, 20 iterations.

The same `gimc complete --method imc` runs as one process, as `mpirun -np 1` and as
`mpirun -np 2 --bind-to none -x RAYON_NUM_THREADS=1 ... --mpi`; we report training /
held-out RMSE, the difference of the predictions (and of W, H when saved) and wall times.

usage: GIMC_DATA=DIR python mpi_imc.py yeast|delicious GIMC_BINARY (built with --features mpi) OUT_DIR [--sparse]
"""
import json, os, subprocess, sys, time
import numpy as np

data = os.environ.get("GIMC_DATA", "datasets")
name, gimc_bin, out = sys.argv[1], sys.argv[2], sys.argv[3]
sparse = "--sparse" in sys.argv[4:]
os.makedirs(out, exist_ok=True)


def arff_rows(path, ncols):
    """The rows of a dense or sparse ARFF file as a dense array."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.strip().lower() == "@data":
                break
        for line in f:
            s = line.strip()
            if not s or s.startswith("%"):
                continue
            r = np.zeros(ncols)
            if s.startswith("{"):
                for item in s[1:-1].split(","):
                    if item.strip():
                        j, v = item.split()
                        r[int(j)] = float(v)
            else:
                r[:] = [float(v) for v in s.split(",")]
            rows.append(r)
    return np.array(rows)


if name == "yeast":
    d, labels, observe, held_frac, rank, lam, iters = 103, 14, 0.5, 0.5, "5", "1", "30"
else:
    d, labels, observe, held_frac, rank, lam, iters = 500, 983, 0.1, 0.02, "10", "1", "20"
A = np.vstack([arff_rows(f"{data}/{name}/{name}-{part}.arff", d + labels) for part in ("train", "test")])
X, T = A[:, :d], A[:, d:]
n, m = T.shape
rng = np.random.default_rng(18)
u = rng.random((n, m))
seen = u < observe
held = (u >= observe) & (u < observe + held_frac)
obs, ask = np.argwhere(seen), np.argwhere(held)
truth = T[held]
extra = []
if name == "yeast":
    # standardised features and a constant (the model has no other intercept)
    X = np.c_[(X - X.mean(0)) / X.std(0), np.ones(n)]
    np.savetxt(f"{out}/x.csv", X, delimiter=",", header=",".join(f"f{j}" for j in range(X.shape[1])), comments="")
    np.savetxt(f"{out}/y.csv", np.eye(m), delimiter=",", header=",".join(f"c{j}" for j in range(m)), comments="", fmt="%d")
    rows_file = f"{out}/x.csv"
    extra = ["--col-features", f"{out}/y.csv"]
elif not sparse:
    X = np.c_[X, np.ones(n)]
    np.savetxt(f"{out}/x.csv", X, delimiter=",", header=",".join(f"f{j}" for j in range(X.shape[1])), comments="", fmt="%d")
    rows_file = f"{out}/x.csv"
else:
    with open(f"{out}/x.libsvm", "w") as f:
        for r in X:
            f.write("0 " + " ".join(f"{j + 1}:1" for j in np.flatnonzero(r)) + f" {d + 1}:1\n")
    rows_file = f"{out}/x.libsvm"
np.savetxt(f"{out}/omega.txt", np.c_[obs, T[seen]], fmt="%d %d %.1f")
np.savetxt(f"{out}/held.txt", ask, fmt="%d %d")
print(f"{name} labels {T.shape}: {len(obs)} observed cells, {len(ask)} held out "
      f"(mean {truth.mean():.4f}: predicting it gives RMSE {truth.std():.4f})")
common = ["-q", "--json", "--seed", "3", "complete", f"{out}/omega.txt", "--method", "imc",
          "--row-features", rows_file, "--rank", rank, "--lambda", lam, "--iters", iters,
          "--entries", f"{out}/held.txt"] + extra
save = bool(extra)
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
mpirun = ["mpirun", "--oversubscribe", "--bind-to", "none"]
runs = {
    "1 process": [gimc_bin] + common + (["--save", f"{out}/one.gimc"] if save else []),
    "mpirun -np 1": mpirun + ["-np", "1", gimc_bin] + common + ["--mpi"],
    "mpirun -np 2": mpirun + ["-np", "2", "-x", "RAYON_NUM_THREADS=1", gimc_bin] + common
                    + (["--save", f"{out}/two.gimc"] if save else []) + ["--mpi"],
}
res = {}
for run, cmd in runs.items():
    t = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode:
        print(r.stderr); sys.exit(1)
    secs = time.time() - t
    v = json.loads(r.stdout)
    pred = np.array([p[2] for p in v["predictions"]])
    held_rmse = float(np.sqrt(np.mean((pred - truth) ** 2)))
    res[run] = (v, pred)
    print(f"{run}: training RMSE {v['train_rmse']!r}, held-out RMSE {held_rmse!r}, "
          + (f"{v['iterations']} iterations, fit {v['fit_seconds']:.2f} s, " if "iterations" in v else "")
          + f"wall {secs:.2f} s")


def tensors(path):
    """The F64 tensors of a safetensors model file (crates/gimc/MODEL_FORMAT.md)."""
    raw = open(path, "rb").read()
    size = int.from_bytes(raw[:8], "little")
    head = json.loads(raw[8:8 + size])
    body = raw[8 + size:]
    return {k: np.frombuffer(body[v["data_offsets"][0]:v["data_offsets"][1]], dtype="<f8").reshape(v["shape"])
            for k, v in head.items() if k != "__metadata__"}


(v1, p1), (v2, p2) = res["1 process"], res["mpirun -np 2"]
print(f"training RMSE relative difference {abs(v1['train_rmse'] - v2['train_rmse']) / v1['train_rmse']:.2e}; "
      f"predictions: max difference {np.max(np.abs(p1 - p2)):.2e}, relative (Frobenius) "
      f"{np.linalg.norm(p1 - p2) / np.linalg.norm(p1):.2e}")
if save:
    t1, t2 = tensors(f"{out}/one.gimc"), tensors(f"{out}/two.gimc")
    for k in ("W", "H"):
        a, b = t1[k], t2[k]
        print(f"{k} {a.shape}: max relative difference {np.max(np.abs(a - b)) / np.max(np.abs(a)):.2e}, "
              f"Frobenius {np.linalg.norm(a - b) / np.linalg.norm(a):.2e}")
