"""Times Storm's all-states P=? [F "unsafe"] on a PRISM explicit DTMC (for the monitor benchmark).

Usage: python3 monitor_storm_time.py TRA LAB REPEATS
Prints `build_s=<seconds> check_s=<median seconds of model checking>`; exits 2 when stormpy is missing.
"""
import statistics
import sys
import time

try:
    import stormpy
except ImportError:
    print("missing Python package: stormpy (pinned in tests/py/requirements.txt; `cargo xtask setup` installs it into target/venv)")
    sys.exit(2)

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from monitor_storm_check import storm_lab, storm_tra  # noqa: E402


def main():
    tra, lab, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
    t0 = time.perf_counter()
    model = stormpy.build_model_from_explicit(storm_tra(tra), storm_lab(lab))
    build = time.perf_counter() - t0
    prop = stormpy.parse_properties('P=? [F "unsafe"]')[0]
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        stormpy.model_checking(model, prop, only_initial_states=False)
        times.append(time.perf_counter() - t0)
    print(f"build_s={build:.6f} check_s={statistics.median(times):.6f}")


if __name__ == "__main__":
    main()
