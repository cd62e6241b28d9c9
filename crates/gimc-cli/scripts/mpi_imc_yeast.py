"""IMC-ALS on a partial Ω under MPI against one process, on a real matrix: yeast's 2,417 x 14
label matrix (0/1), rows with their 103 standardised features and a constant, columns with identity
features (a 14 x 14 identity file, so the model can be saved and W compared). Half of the
cells are observed (seeded), the other half held out. The same `gimc complete --method imc`
runs as one process and as `mpirun -np 2 --bind-to none -x RAYON_NUM_THREADS=1 ... --mpi`;
we report training / held-out RMSE, the max relative difference of W and H and wall times.

usage: GIMC_DATA=DIR python mpi_imc_yeast.py GIMC_BINARY (built with --features mpi) OUT_DIR
"""
import json, os, subprocess, sys, time
import numpy as np
from scipy.io import arff

data = os.path.join(os.environ.get("GIMC_DATA", "datasets"), "yeast")
gimc_bin, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
rows = []
for part in ("train", "test"):
    d, meta = arff.loadarff(f"{data}/yeast-{part}.arff")
    rows.append(np.array([[float(v) if not isinstance(v, bytes) else float(v.decode()) for v in r] for r in d]))
A = np.vstack(rows)
X, T = A[:, :103], A[:, 103:]
# standardised features and a constant one (the model has no other intercept)
X = np.c_[(X - X.mean(0)) / X.std(0), np.ones(len(X))]
n, m = T.shape
rng = np.random.default_rng(18)
seen = rng.random((n, m)) < 0.5
obs, held = np.argwhere(seen), np.argwhere(~seen)
np.savetxt(f"{out}/x.csv", X, delimiter=",", header=",".join(f"f{j}" for j in range(X.shape[1])), comments="")
np.savetxt(f"{out}/y.csv", np.eye(m), delimiter=",", header=",".join(f"c{j}" for j in range(m)), comments="", fmt="%d")
np.savetxt(f"{out}/omega.txt", np.c_[obs, T[seen]], fmt="%d %d %.1f")
np.savetxt(f"{out}/held.txt", held, fmt="%d %d")
truth = T[~seen]
print(f"yeast labels {T.shape}: {len(obs)} observed cells, {len(held)} held out")
common = ["-q", "--json", "--seed", "3", "complete", f"{out}/omega.txt", "--method", "imc",
          "--row-features", f"{out}/x.csv", "--col-features", f"{out}/y.csv", "--rank", "5",
          "--lambda", "1", "--iters", "30", "--entries", f"{out}/held.txt"]
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
mpirun = ["mpirun", "--oversubscribe", "--bind-to", "none"]
runs = {
    "1 process": [gimc_bin] + common + ["--save", f"{out}/one.gimc"],
    "mpirun -np 1": mpirun + ["-np", "1", gimc_bin] + common + ["--mpi"],
    "mpirun -np 2": mpirun + ["-np", "2", "-x", "RAYON_NUM_THREADS=1", gimc_bin] + common
                    + ["--save", f"{out}/two.gimc", "--mpi"],
}
res = {}
for name, cmd in runs.items():
    t = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode:
        print(r.stderr); sys.exit(1)
    secs = time.time() - t
    v = json.loads(r.stdout)
    pred = np.array([p[2] for p in v["predictions"]])
    held_rmse = float(np.sqrt(np.mean((pred - truth) ** 2)))
    res[name] = (v, pred)
    print(f"{name}: training RMSE {v['train_rmse']!r}, held-out RMSE {held_rmse!r}, "
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
      f"max |prediction difference| {np.max(np.abs(p1 - p2)):.2e}")
t1, t2 = tensors(f"{out}/one.gimc"), tensors(f"{out}/two.gimc")
for k in ("W", "H"):
    a, b = t1[k], t2[k]
    print(f"{k} {a.shape}: max relative difference {np.max(np.abs(a - b)) / np.max(np.abs(a)):.2e}, "
          f"Frobenius {np.linalg.norm(a - b) / np.linalg.norm(a):.2e}")
