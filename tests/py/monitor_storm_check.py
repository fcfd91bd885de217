"""Checks avguard's cached reachability table against Storm on the same exported DTMC.

Usage: python3 monitor_storm_check.py DIR NAME [TOLERANCE]
Reads DIR/NAME.tra and DIR/NAME.lab (PRISM explicit format; converted to Storm's dialect of it, which
wants a model-type hint and a #DECLARATION block), asks Storm for P=? [F "unsafe"] in every state
with a sound, high-precision solver, and compares with DIR/NAME.table.csv. Prints the largest difference;
exits 1 on a mismatch, 2 when a required package is missing.
"""
import csv
import os
import sys
import tempfile

try:
    import stormpy
    import stormpy.developer as developer
except ImportError:
    print("missing Python package: stormpy (pinned in tests/py/requirements.txt; `cargo xtask setup` installs it into target/venv)")
    sys.exit(2)


def storm_tra(tra):
    """PRISM's .tra starts with `STATES TRANSITIONS`; Storm's explicit parser wants a `dtmc` hint instead.
    Returns the path of a converted copy, after checking the header against the body."""
    with open(tra) as f:
        header = f.readline().split()
        body = f.read()
    n_states, n_transitions = int(header[0]), int(header[1])
    lines = body.strip().splitlines()
    if len(lines) != n_transitions:
        print(f"header says {n_transitions} transitions, file has {len(lines)}")
        sys.exit(1)
    if max(int(l.split()[0]) for l in lines) != n_states - 1:
        print("header state count does not match the transitions")
        sys.exit(1)
    fd, path = tempfile.mkstemp(suffix=".tra")
    with os.fdopen(fd, "w") as f:
        f.write("dtmc\n")
        f.write(body)
    return path


def storm_lab(lab):
    """PRISM's .lab (`0="init" 1="deadlock" ...` then `s: ids`) to Storm's (#DECLARATION ... #END, `s names`)."""
    with open(lab) as f:
        header = f.readline().split()
        rows = [l for l in f.read().splitlines() if l.strip()]
    names = {}
    for item in header:
        key, value = item.split("=", 1)
        names[key] = value.strip('"')
    fd, path = tempfile.mkstemp(suffix=".lab")
    with os.fdopen(fd, "w") as f:
        f.write("#DECLARATION\n" + " ".join(names.values()) + "\n#END\n")
        for row in rows:
            state, ids = row.split(":", 1)
            f.write(state.strip() + " " + " ".join(names[i] for i in ids.split()) + "\n")
    return path


def storm_values(tra, lab):
    converted = storm_tra(tra)
    labels = storm_lab(lab)
    try:
        model = stormpy.build_model_from_explicit(converted, labels)
    finally:
        os.remove(converted)
        os.remove(labels)
    prop = stormpy.parse_properties('P=? [F "unsafe"]')[0]
    env = stormpy.Environment()
    solver = env.solver()
    # Sound (interval-bounded) native iteration to an absolute 1e-12: well inside the 1e-9 we check.
    solver.force_soundness = True
    solver.set_linear_equation_solver_type(developer.EquationSolverType.NATIVE)
    native = solver.native()
    native.precision = stormpy.Rational("1/1000000000000")
    native.relative_termination_criterion = False
    result = stormpy.model_checking(model, prop, only_initial_states=False, environment=env)
    return list(result.get_value_vector())


def main():
    folder, name = sys.argv[1], sys.argv[2]
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-9
    values = storm_values(f"{folder}/{name}.tra", f"{folder}/{name}.lab")
    with open(f"{folder}/{name}.table.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    if len(rows) != len(values):
        print(f"state count differs: table {len(rows)}, storm {len(values)}")
        sys.exit(1)
    worst, worst_state = 0.0, None
    for row in rows:
        s = int(row["state"])
        d = abs(float(row["p_unsafe"]) - values[s])
        if d > worst:
            worst, worst_state = d, s
    print(f"states={len(values)} max_abs_diff={worst:.3e} at={worst_state}")
    sys.exit(0 if worst <= tol else 1)


if __name__ == "__main__":
    main()
