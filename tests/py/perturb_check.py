"""Independent check of `avguard perturb --perception-range R --clear-priority --no-map`, driven by
tests/it/perturb_cli.rs: recomputes with h5py and numpy, from the original logs alone, which road users each
frame keeps (those whose centre lies within R of the ego's position, in their original order), and compares
every obstacle column, the right-of-way marks, the road fields and the labels with avguard's copies.

  perturb_check.py ORIG_DIR COPY_DIR R   print {"files", "frames", "rows_kept", "rows_dropped"} as JSON, or
                                         exit 1 naming the first file, column and row that differ
"""
import glob
import json
import os
import sys

import h5py  # pinned in tests/py/requirements.txt, as numpy is
import numpy as np

OBSTACLE_COLUMNS = ["id", "type", "x", "y", "heading", "speed", "length", "width"]
KEPT_FRAME_COLUMNS = ["t", "x", "y", "heading", "speed", "accel", "collision", "destination"]
ROAD_FIELDS = {
    "stopline_dist": np.inf,
    "junction_dist": np.inf,
    "crosswalk_dist": np.inf,
    "stopsign_dist": np.inf,
    "speed_limit": np.inf,
    "light_color": 0,
    "light_blink": 0,
    "signal_ahead": 0,
    "traffic_jam": 0,
    "lane_number": 1,
    "planned_turn": 0,
}


def fail(msg):
    print(msg, file=sys.stderr)
    sys.exit(1)


def main(orig_dir, copy_dir, r):
    files = frames = kept_rows = dropped_rows = 0
    for orig in sorted(glob.glob(os.path.join(orig_dir, "*.h5"))):
        name = os.path.basename(orig)
        copy = os.path.join(copy_dir, name)
        with h5py.File(orig, "r") as a, h5py.File(copy, "r") as b:
            fa, fb = a["frames"], b["frames"]
            for c in KEPT_FRAME_COLUMNS:
                if not np.array_equal(fa[c][...], fb[c][...]):
                    fail(f"{name}: frames/{c} changed")
            for c, want in ROAD_FIELDS.items():
                if not np.all(fb[c][...] == want):
                    fail(f"{name}: frames/{c} is not {want} everywhere")
            for key in a.attrs:
                if a.attrs[key] != b.attrs[key]:
                    fail(f"{name}: attribute {key} changed")
            oa, ob = a["obstacles"], b["obstacles"]
            off = oa["offset"][...]
            ex, ey = fa["x"][...], fa["y"][...]
            ox, oy = oa["x"][...], oa["y"][...]
            keep = np.zeros(len(ox), dtype=bool)
            want_offset = [0]
            for k in range(len(off) - 1):
                lo, hi = int(off[k]), int(off[k + 1])
                keep[lo:hi] = np.hypot(ox[lo:hi] - ex[k], oy[lo:hi] - ey[k]) <= r
                want_offset.append(want_offset[-1] + int(keep[lo:hi].sum()))
            if not np.array_equal(ob["offset"][...].astype(np.int64), np.array(want_offset)):
                fail(f"{name}: obstacles/offset differs from the recomputed one")
            for c in OBSTACLE_COLUMNS:
                got, want = ob[c][...], oa[c][...][keep]
                if not np.array_equal(got, want):
                    row = int(np.argmax(got != want)) if got.shape == want.shape else -1
                    fail(f"{name}: obstacles/{c} differs (row {row})")
            if np.any(ob["priority"][...] != 0):
                fail(f"{name}: a right-of-way mark is left")
            files += 1
            frames += len(off) - 1
            kept_rows += int(keep.sum())
            dropped_rows += int((~keep).sum())
    if files == 0:
        fail(f"no logs in {orig_dir}")
    print(json.dumps({"files": files, "frames": frames, "rows_kept": kept_rows, "rows_dropped": dropped_rows}))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        fail(__doc__)
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
