#!/usr/bin/env python3
"""Convert the Weka segment ARFF pair to LIBSVM, scaling every feature to [-1, 1] with the
training file's min/max (what LIBSVM's svm-scale does); classes become 1..C in declaration order."""
import sys
def read(path):
    classes, rows = None, []
    data = False
    for line in open(path):
        s = line.strip()
        if not s or s.startswith('%'):
            continue
        if s.lower().startswith('@attribute') and '{' in s:
            classes = [c.strip() for c in s[s.index('{')+1:s.rindex('}')].split(',')]
        elif s.lower() == '@data':
            data = True
        elif data:
            f = s.split(',')
            rows.append(([float(v) for v in f[:-1]], f[-1].strip()))
    return classes, rows
classes, train = read(sys.argv[1])
_, test = read(sys.argv[2])
d = len(train[0][0])
lo = [min(r[0][j] for r in train) for j in range(d)]
hi = [max(r[0][j] for r in train) for j in range(d)]
def write(rows, out):
    with open(out, 'w') as f:
        for x, c in rows:
            toks = [str(classes.index(c) + 1)]
            for j, v in enumerate(x):
                if hi[j] > lo[j]:
                    s = -1 + 2 * (v - lo[j]) / (hi[j] - lo[j])
                    if s != 0:
                        toks.append(f"{j+1}:{s:.6g}")
            f.write(' '.join(toks) + '\n')
write(train, sys.argv[3]); write(test, sys.argv[4])
