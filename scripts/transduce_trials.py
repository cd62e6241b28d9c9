#!/usr/bin/env python3
"""Repeats the MC-1 / MC-b fits of `mc1-yeast` (or `mc1-emotions`) with `gimc transduce`.

For every ω and trial, `gimc-experiments trial-data` writes the trial's data (the experiment's
features and labels, its hidden cells `?`) and prints the `gimc transduce` command that rebuilds
the trial's random stream; the script runs that command and `gimc eval --transduction --input`,
then prints each trial's λ, μ and label error and the mean (std) over trials per ω: the numbers
of the experiment's table, since the fits run the same code on the same data and stream.

usage: transduce_trials.py [--experiment mc1-yeast] [--method mc1] [--omegas 0.4,0.6,0.8]
                           [--trials 10] [--out DIR] [--json FILE]
Binaries: $GIMC_BIN (default target/release/gimc) and $GIMC_EXPERIMENTS_BIN (default
target/release/gimc-experiments); data from $GIMC_DATA.
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time


def run(cmd, stderr=False):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out.stderr if stderr else out.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiment", default="mc1-yeast")
    ap.add_argument("--method", default="mc1", choices=["mc1", "mcb"])
    ap.add_argument("--omegas", default="0.4,0.6,0.8")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--out", default="out/trials")
    ap.add_argument("--json", help="write every trial's result here")
    a = ap.parse_args()
    gimc = os.environ.get("GIMC_BIN", "target/release/gimc")
    exp = os.environ.get("GIMC_EXPERIMENTS_BIN", "target/release/gimc-experiments")
    label = {"mc1": "MC-1", "mcb": "MC-b"}[a.method]
    results = []
    for omega in [float(w) for w in a.omegas.split(",")]:
        errors = []
        for trial in range(a.trials):
            printed = run([exp, "trial-data", a.experiment, "--omega", str(omega),
                           "--trial", str(trial), "--out", a.out])
            lines = printed.splitlines()
            at = next(i for i, l in enumerate(lines) if l.startswith(label + ": "))
            transduce = shlex.split(lines[at].split(": ", 1)[1])
            evaluate = shlex.split(lines[at + 1].strip())
            start = time.time()
            # the predictions go to the command's -o file; λ and μ are on its last info line
            info = run([gimc] + transduce[1:], stderr=True).strip().splitlines()[-1]
            seconds = time.time() - start
            chosen = re.search(r"λ = (\S+), μ = (\S+);", info)
            fit = {"lambda": float(chosen.group(1)), "mu": float(chosen.group(2))}
            err = json.loads(run([gimc, "--json"] + evaluate[1:]))["label_error"]
            errors.append(err)
            results.append({"omega": omega, "trial": trial, "lambda": fit["lambda"],
                            "mu": fit["mu"], "label_error": err, "seconds": seconds})
            print(f"ω = {omega:.0%} trial {trial}: λ = {fit['lambda']}, μ = {fit['mu']:.3e}, "
                  f"label error {err:.4f} % ({seconds:.1f} s)", flush=True)
        mean = sum(errors) / len(errors)
        std = statistics.stdev(errors) if len(errors) > 1 else 0.0
        print(f"{label} at ω = {omega:.0%}: {mean:.1f} ({std:.1f}); mean {mean!r}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
