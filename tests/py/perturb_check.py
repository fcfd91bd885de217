"""Independent check of `avguard perturb`, driven by tests/it/perturb_cli.rs: recomputes with h5py and numpy,
from the original logs alone, what a copy should hold, and compares it with avguard's copies.

  perturb_check.py ORIG_DIR COPY_DIR R
      a copy made with `--perception-range R --clear-priority --no-map`: which road users each frame keeps
      (those whose centre lies within R of the ego's position, in their original order), every obstacle
      column, the right-of-way marks, the road fields and the labels; prints {"files", "frames",
      "rows_kept", "rows_dropped"} as JSON
  perturb_check.py --delay ORIG_DIR COPY_DIR S
      a copy made with `--perception-delay S` alone: every frame column as it was, and the road users of
      frame i those of the original frame i - k, k = S / frame_period_s (none for i < k); prints {"files",
      "frames", "frames_back"} as JSON
  perturb_check.py --jitter ORIG_DIR COPY_DIR S J
      a copy made with `--perception-delay S --perception-jitter J` alone: every frame column as it was;
      each frame's road users those of one original frame j, not later than the frame's and never older
      than the frame before's, from S - J old (t_j <= t_i - S + J) to no older than the latest frame at
      least S + J old (times within a microsecond), or none while no frame is S + J old; prints
      {"files", "frames", "ages": the distinct ages in frames} as JSON
  perturb_check.py --drops ORIG_DIR COPY_DIR
      a copy made with `--drop-frames P` alone: the kept times a subset of the original times, the first,
      the last and every collision or destination frame kept, each kept frame (its road users too) as it
      was; prints {"files", "frames", "frames_kept"} as JSON

Each exits 1 naming the first file, column and row that differ.
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


def pairs(orig_dir, copy_dir):
    """Each original log's name with it and its copy open, in name order; fails when there is none."""
    paths = sorted(glob.glob(os.path.join(orig_dir, "*.h5")))
    if not paths:
        fail(f"no logs in {orig_dir}")
    for orig in paths:
        name = os.path.basename(orig)
        with h5py.File(orig, "r") as a, h5py.File(os.path.join(copy_dir, name), "r") as b:
            for key in a.attrs:
                if a.attrs[key] != b.attrs[key]:
                    fail(f"{name}: attribute {key} changed")
            yield name, a, b


def obstacles(log):
    """The obstacle offsets and every obstacle column of a log, read once."""
    o = log["obstacles"]
    return o["offset"][...], {c: o[c][...] for c in OBSTACLE_COLUMNS + ["priority"]}


def road_users(table, k):
    """Every obstacle column of frame k's road users, from `obstacles(log)`."""
    off, columns = table
    lo, hi = int(off[k]), int(off[k + 1])
    return {c: v[lo:hi] for c, v in columns.items()}


def same_road_users(name, what, got, want):
    for c in want:
        if not np.array_equal(got[c], want[c]):
            fail(f"{name}: obstacles/{c} of {what} differ")


def check_delay(orig_dir, copy_dir, delay_s):
    files = frames = 0
    back = None
    for name, a, b in pairs(orig_dir, copy_dir):
        fa, fb = a["frames"], b["frames"]
        for c in fa:
            if not np.array_equal(fa[c][...], fb[c][...]):
                fail(f"{name}: frames/{c} changed")
        k = int(round(delay_s / float(a.attrs["frame_period_s"])))
        back = k if back is None else back
        if k != back:
            fail(f"{name}: another frame period than the other logs")
        n = len(fa["t"])
        oa, ob = obstacles(a), obstacles(b)
        for i in range(n):
            got = road_users(ob, i)
            if i < k:
                if len(got["id"]):
                    fail(f"{name}: frame {i} has road users, earlier than the delay")
            else:
                same_road_users(name, f"frame {i} (want frame {i - k})", got, road_users(oa, i - k))
        files += 1
        frames += n
    print(json.dumps({"files": files, "frames": frames, "frames_back": back}))


def check_jitter(orig_dir, copy_dir, delay_s, jitter_s):
    tol = 1e-6
    files = frames = 0
    ages = set()
    for name, a, b in pairs(orig_dir, copy_dir):
        fa, fb = a["frames"], b["frames"]
        for c in fa:
            if not np.array_equal(fa[c][...], fb[c][...]):
                fail(f"{name}: frames/{c} changed")
        t = fa["t"][...]
        ta, tb = obstacles(a), obstacles(b)
        shown = -1  # the original frame the frame before showed (-1: none yet)
        for i in range(len(t)):
            got = road_users(tb, i)
            oldest = np.flatnonzero(t <= t[i] - delay_s - jitter_s + tol)  # arrived whatever its delay
            youngest = np.flatnonzero(t <= t[i] - delay_s + jitter_s + tol)  # may have arrived
            youngest = youngest[youngest <= i]
            if len(got["id"]) == 0 and all(len(road_users(ta, j)["id"]) == 0 for j in range(i + 1)):
                continue  # nothing to see yet: no frame to tell
            # The original frames this one may show, by its road users: at or after the one shown before.
            lo = max(shown, oldest[-1] if len(oldest) else -1)
            hi = youngest[-1] if len(youngest) else -1
            match = [
                j for j in range(max(lo, 0), hi + 1)
                if all(np.array_equal(got[c], v) for c, v in road_users(ta, j).items())
            ]
            if not match:
                if len(got["id"]) == 0 and not len(oldest):
                    continue  # none arrived yet
                fail(f"{name}: frame {i}'s road users are not those of a frame {delay_s} ± {jitter_s} s "
                     f"earlier (frames {lo}..{hi}) at or after frame {shown}")
            shown = match[0]
            ages.add(i - shown)
            frames += 1
        files += 1
    print(json.dumps({"files": files, "frames": frames, "ages": sorted(int(x) for x in ages)}))


def check_drops(orig_dir, copy_dir):
    files = frames = kept = 0
    for name, a, b in pairs(orig_dir, copy_dir):
        fa, fb = a["frames"], b["frames"]
        ta, tb = fa["t"][...], fb["t"][...]
        at = {t: i for i, t in enumerate(ta.tolist())}
        if len(tb) > len(ta) or not np.all(np.diff(tb) > 0):
            fail(f"{name}: the kept times are not increasing, or more than the original's")
        missing = [t for t in tb.tolist() if t not in at]
        if missing:
            fail(f"{name}: t = {missing[0]} is not an original time")
        src = np.array([at[t] for t in tb.tolist()], dtype=np.int64)
        protected = np.flatnonzero((fa["collision"][...] != 0) | (fa["destination"][...] != 0)).tolist()
        kept_set = set(src.tolist())
        for i in [0, len(ta) - 1] + protected:
            if i not in kept_set:
                fail(f"{name}: frame {i} (t = {ta[i]}) dropped, but it must be kept")
        for c in fa:
            if not np.array_equal(fa[c][...][src], fb[c][...]):
                fail(f"{name}: frames/{c} of a kept frame changed")
        oa, ob = obstacles(a), obstacles(b)
        for j, i in enumerate(src.tolist()):
            same_road_users(name, f"kept frame {j} (original {i})", road_users(ob, j), road_users(oa, i))
        files += 1
        frames += len(ta)
        kept += len(tb)
    print(json.dumps({"files": files, "frames": frames, "frames_kept": kept}))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--delay":
        check_delay(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    elif len(sys.argv) == 6 and sys.argv[1] == "--jitter":
        check_jitter(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
    elif len(sys.argv) == 4 and sys.argv[1] == "--drops":
        check_drops(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and not sys.argv[1].startswith("--"):
        main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
    else:
        fail(__doc__)
