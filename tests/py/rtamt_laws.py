"""Checks avguard's law verdicts against rtamt's discrete-time STL monitor.

Usage: python3 rtamt_laws.py DIR

DIR holds case files written by the Rust test `laws_rtamt`. Each file has, one per line: the number P of
the law body's parts (its conjuncts, grouped by horizon); for each part, its formula in rtamt syntax over
0/1 atom variables a0, a1, ... and its horizon H in frames; a CSV header `t,a0,...,verdict`; then one row
per frame. avguard's verdict at frame k must be 1 exactly when, for some part, k - H is a position of the
trace and rtamt's robustness of the part there is negative (every frame is compared). Atoms are compared as
`aK >= 0.5` on 0/1 signals, so robustness is never 0.
"""

import os
import sys

try:
    import rtamt
except ImportError:
    print("missing Python package rtamt (pinned in tests/py/requirements.txt; `cargo xtask setup` installs it into target/venv)", file=sys.stderr)
    sys.exit(2)


def robustness(body, header, cols, n):
    spec = rtamt.StlDiscreteTimeSpecification()
    for name in header:
        if name.startswith("a"):
            spec.declare_var(name, "float")
    spec.set_sampling_period(100, "ms", 0.1)
    spec.spec = body
    spec.parse()
    # rtamt's discrete monitor indexes samples by time; feed exact multiples of the period.
    data = {"time": [round(i * 0.1, 10) for i in range(n)]}
    data.update({name: cols[name] for name in header if name.startswith("a")})
    return [r for _, r in spec.evaluate(data)]


def check(path):
    with open(path) as f:
        lines = f.read().splitlines()
    n_parts = int(lines[0])
    parts = [(lines[1 + 2 * p], int(lines[2 + 2 * p])) for p in range(n_parts)]
    header, rows = lines[1 + 2 * n_parts].split(","), lines[2 + 2 * n_parts:]
    cols = {name: [] for name in header}
    for row in rows:
        for name, value in zip(header, row.split(",")):
            cols[name].append(float(value))
    n = len(rows)
    robs = [(robustness(body, header, cols, n), h, body) for body, h in parts]
    compared = violations = 0
    for k in range(n):
        ours = cols["verdict"][k] == 1.0
        theirs = [body for rob, h, body in robs if k - h >= 0 and rob[k - h] < 0]
        if ours != bool(theirs):
            return f"{os.path.basename(path)}: frame {k}: avguard says {ours}, rtamt finds false parts {theirs} (parts {parts})", 0, 0
        compared += 1
        violations += ours
    return None, compared, violations


def main():
    folder = sys.argv[1]
    total = total_viol = cases = 0
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".case"):
            continue
        err, compared, violations = check(os.path.join(folder, name))
        if err:
            print(err, file=sys.stderr)
            sys.exit(1)
        cases += 1
        total += compared
        total_viol += violations
    print(f"cases={cases} positions={total} violations={total_viol}")


if __name__ == "__main__":
    main()
