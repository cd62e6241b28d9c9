#!/usr/bin/env python3
"""`gimc fit` with no flags on the multi-class sets of the data directory, judged on held-out rows.

abalone, winequality (red and white) and covertype (Kaggle's 15,120 rows) come without a test
part: each file's data lines are shuffled with Python's `random.Random(SEED)` (seed 7 unless
--seed) and cut into the first three quarters for training and the last quarter for testing;
segment keeps its own two files. For each set this runs `gimc fit TRAIN -o MODEL` (plus any
extra fit flags given after `--`), `gimc predict`, `gimc eval`, and prints one table row: the
test accuracy, the chosen setting and the fit's wall seconds.

    GIMC_DATA=DIR python3 scripts/multiclass_holdout.py target/release/gimc OUT_DIR [--seed N] [-- FIT FLAGS]

Standard library only; OUT_DIR receives the split files, models and predictions.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

# (name, file under the data directory, class column)
SPLIT = [
    ("abalone", "abalone/abalone.data", "Rings"),
    ("winequality-red", "winequality/winequality-red.csv", "quality"),
    ("winequality-white", "winequality/winequality-white.csv", "quality"),
    ("covtype-kaggle", "covtype/covertype-kaggle-train.csv", "last"),
]


def split(src, out_dir, name, seed):
    """Writes NAME-train.csv (3/4 of the data lines, shuffled) and NAME-test.csv beside it."""
    with open(src) as f:
        lines = f.read().splitlines()
    header, rows = lines[0], [line for line in lines[1:] if line.strip()]
    random.Random(seed).shuffle(rows)
    cut = int(len(rows) * 0.75)
    paths = []
    for part, part_rows in (("train", rows[:cut]), ("test", rows[cut:])):
        path = os.path.join(out_dir, f"{name}-{part}.csv")
        with open(path, "w") as f:
            f.write("\n".join([header] + part_rows) + "\n")
        paths.append(path)
    return paths


def run(gimc, args):
    return subprocess.run([gimc, *args], check=True, capture_output=True, text=True).stdout


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[: argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gimc")
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)
    data = os.environ.get("GIMC_DATA", "datasets")
    os.makedirs(a.out_dir, exist_ok=True)
    sets = [
        (name, *split(os.path.join(data, src), a.out_dir, name, a.seed), ["--label-column", col])
        for name, src, col in SPLIT
    ]
    seg = os.path.join(data, "segment")
    sets.append(
        ("segment", os.path.join(seg, "segment-challenge.arff"), os.path.join(seg, "segment-test.arff"), [])
    )
    print("| set | train / test rows | test accuracy % | chosen | fit s |")
    print("| --- | --- | ---: | --- | ---: |")
    for name, train, test, target in sets:
        model = os.path.join(a.out_dir, f"{name}.gimc")
        pred = os.path.join(a.out_dir, f"{name}.pred")
        start = time.perf_counter()
        fit = json.loads(run(a.gimc, ["-q", "--json", "fit", train, *target, *extra, "-o", model]))
        seconds = time.perf_counter() - start
        run(a.gimc, ["-q", "predict", test, *target, "-m", model, "-o", pred])
        ev = json.loads(run(a.gimc, ["-q", "--json", "eval", pred, test, *target]))
        c = fit["chosen"]
        blocks = "+".join(
            b["name"]
            + (f"(γ={b['gamma_factor']:g}·scale)" if b["gamma_factor"] is not None else "")
            + (f"[{b['iterations']} it.]" if b["iterations"] else "")
            for b in c["blocks"]
        )
        chosen = f"{c['transform']} {blocks} λ={c['lambda']:g}"
        print(
            f"| {name} | {fit['rows']} / {ev['rows']} | {100 * ev['metrics']['accuracy']:.2f} "
            f"| {chosen} | {seconds:.1f} |"
        )


if __name__ == "__main__":
    main()
