"""Independent check of how `avguard learn` reads whether road users jump against their speeds, driven by
tests/it/perturb_cli.rs: recomputes with h5py and numpy, from the logs alone, the steps `learn` names.

  track_steps.py DIR
      over every log of DIR: each road user in two consecutive frames (the same `id`, the first of an id in
      each frame; frame times increasing), moving at least 2 m/s in both, is a step; it jumps when its
      displacement along the first frame's heading differs from the mean of its two speeds times the time
      between the frames by more than half of that. Each road user in three consecutive frames (the same
      `id`, the first of an id in each frame, frame times increasing, its velocity finite in all three) is a
      pair of steps; it flips when both velocity changes divided by the time between their frames are at
      least 2 m/s² long and point in opposite directions. Prints {"logs", "steps", "jumps", "pairs",
      "flips"} as JSON
"""
import glob
import json
import os
import sys

import h5py  # pinned in tests/py/requirements.txt, as numpy is
import numpy as np

MIN_SPEED = 2.0
FLIP_MIN_ACCEL = 2.0


def steps_of(path):
    with h5py.File(path, "r") as log:
        t = log["frames/t"][:]
        obstacles = log["obstacles"]
        offset = obstacles["offset"][:]
        ids, x, y = obstacles["id"][:], obstacles["x"][:], obstacles["y"][:]
        heading, speed = obstacles["heading"][:], obstacles["speed"][:]
    steps = jumps = pairs = flips = 0
    previous = {}
    velocity = np.stack([speed * np.cos(heading), speed * np.sin(heading)], axis=1)
    accel_before = {}
    for k in range(len(t)):
        current = {}
        for row in range(offset[k], offset[k + 1]):
            current.setdefault(int(ids[row]), row)
        dt = t[k] - t[k - 1] if k > 0 else np.nan
        accel_now = {}
        if dt > 0:
            for track, b in current.items():
                a = previous.get(track)
                if a is None or not (np.all(np.isfinite(velocity[a])) and np.all(np.isfinite(velocity[b]))):
                    continue
                accel = (velocity[b] - velocity[a]) / dt
                before = accel_before.get(track)
                if before is not None:
                    pairs += 1
                    strong = min(np.hypot(*before), np.hypot(*accel)) >= FLIP_MIN_ACCEL
                    flips += int(strong and float(np.dot(before, accel)) < 0)
                accel_now[track] = accel
        if dt > 0:
            for track, b in current.items():
                a = previous.get(track)
                if a is None or not (speed[a] >= MIN_SPEED and speed[b] >= MIN_SPEED):
                    continue
                along = (x[b] - x[a]) * np.cos(heading[a]) + (y[b] - y[a]) * np.sin(heading[a])
                expected = 0.5 * (speed[a] + speed[b]) * dt
                if np.isfinite(along):
                    steps += 1
                    jumps += int(abs(along - expected) > 0.5 * expected)
        previous = current
        accel_before = accel_now
    return steps, jumps, pairs, flips


def main():
    logs = sorted(glob.glob(os.path.join(sys.argv[1], "*.h5")))
    totals = [steps_of(p) for p in logs]
    print(json.dumps({"logs": len(logs), "steps": sum(t[0] for t in totals),
                      "jumps": sum(t[1] for t in totals), "pairs": sum(t[2] for t in totals),
                      "flips": sum(t[3] for t in totals)}))


if __name__ == "__main__":
    main()
