"""Times rtamt's online discrete-time monitor on law51_sub5, for the laws bench's side-by-side figure.

Usage: python3 rtamt_bench.py N   -> prints "rtamt_online_samples_per_s=<rate>"

The online monitor handles past-time operators only, so the law body `A -> F[0,2] B` is monitored as
"violation certain now": once[2:2](A) and historically[0:2](not B), as in laws.md §7.
"""

import random
import sys
import time

try:
    import rtamt
except ImportError:
    print("missing Python package rtamt (pinned in tests/py/requirements.txt; `cargo xtask setup` installs it into target/venv)", file=sys.stderr)
    sys.exit(2)

n = int(sys.argv[1])
spec = rtamt.StlDiscreteTimeSpecification()
for v in ["color", "stopline", "junction", "npc", "speed"]:
    spec.declare_var(v, "float")
spec.set_sampling_period(100, "ms", 0.1)
a = "((color == 1) and ((stopline <= 2) or (junction <= 2) or (npc <= 0.5)))"
spec.spec = f"(once[2:2]({a})) and (historically[0:2](not (speed < 0.5)))"
spec.parse()
rng = random.Random(0)
rows = [
    (rng.choice([0, 1, 2, 3]), rng.choice([0.5, 1, 3, 50]), rng.choice([1, 3, 50]), rng.choice([0.3, 5, 1000]),
     rng.choice([0, 0.3, 10, 40]))
    for _ in range(n)
]
start = time.perf_counter()
for k, (c, s, j, npc, v) in enumerate(rows):
    spec.update(k, [("color", c), ("stopline", s), ("junction", j), ("npc", npc), ("speed", v)])
elapsed = time.perf_counter() - start
print(f"rtamt_online_samples_per_s={n / elapsed:.1f}")
