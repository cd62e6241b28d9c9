#!/usr/bin/env python3
"""Make a transduction task from a labelled Mulan ARFF file: hide a fraction of the feature
cells (`?`) and the labels of a fraction of the rows, and write the hidden labels aside.

    hide_cells.py SRC.arff N_LABELS OUT.arff TRUTH.txt [feature_fraction=0.2] [row_fraction=0.3] [seed=0]

The Mulan XML label file must be copied next to OUT.arff under OUT's stem. TRUTH.txt has one
`row l1 l2 …` line (0/1) per hidden row; compare `gimc --json transduce OUT.arff` with it."""
import random
import sys

src, n_labels, out, truth_path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ff = float(sys.argv[5]) if len(sys.argv) > 5 else 0.2
rf = float(sys.argv[6]) if len(sys.argv) > 6 else 0.3
random.seed(int(sys.argv[7]) if len(sys.argv) > 7 else 0)
lines = open(src).read().split("\n")
at = [i for i, l in enumerate(lines) if l.strip().lower() == "@data"][0]
rows, truth = [], []
for r, line in enumerate(l for l in lines[at + 1:] if l.strip()):
    v = line.split(",")
    feats, labs = v[:-n_labels], v[-n_labels:]
    feats = ["?" if random.random() < ff else x for x in feats]
    if random.random() < rf:
        truth.append(f"{r} {' '.join(labs)}")
        labs = ["?"] * n_labels
    rows.append(",".join(feats + labs))
open(out, "w").write("\n".join(lines[: at + 1] + rows) + "\n")
open(truth_path, "w").write("\n".join(truth) + "\n")
