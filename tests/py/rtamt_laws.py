"""Checks avguard's law verdicts against rtamt's discrete-time STL monitor.

Usage: python3 rtamt_laws.py DIR

DIR holds case files written by the Rust test `laws_rtamt`. Each file has, one per line: the law body in
rtamt syntax over 0/1 atom variables a0, a1, ...; the body's horizon H in frames; a CSV header
`t,a0,...,verdict`; then one row per frame. For every position i whose horizon lies inside the trace
(i + H < n), avguard's verdict at frame i + H must be 1 exactly when rtamt's robustness of the body at i is
negative. Atoms are compared as `aK >= 0.5` on 0/1 signals, so robustness is never 0.
"""

import os
import sys

try:
    import rtamt
except ImportError:
    print("missing Python package rtamt (pinned in tests/py/requirements.txt; `cargo xtask setup` installs it into target/venv)", file=sys.stderr)
    sys.exit(2)


def check(path):
    with open(path) as f:
        lines = f.read().splitlines()
    body, horizon, header, rows = lines[0], int(lines[1]), lines[2].split(","), lines[3:]
    cols = {name: [] for name in header}
    for row in rows:
        for name, value in zip(header, row.split(",")):
            cols[name].append(float(value))
    n = len(rows)
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
    rob = spec.evaluate(data)
    compared = violations = 0
    for i in range(n - horizon):
        ours = cols["verdict"][i + horizon] == 1.0
        theirs = rob[i][1] < 0
        if ours != theirs:
            return f"{os.path.basename(path)}: position {i}: avguard says {ours}, rtamt robustness {rob[i][1]} ({body})", 0, 0
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
