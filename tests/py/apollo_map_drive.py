"""HD-map interop check: drives along cube_town's lanes towards each signal's stop line through a running
`avguard bridge --map cube_town/base_map.bin --record REC.h5`, with the stock roslibpy client and no
/avguard/road_context message at all, and prints the road fields an independent computation expects.

Usage: python apollo_map_drive.py PORT MAP.bin
The map is decoded with Apollo 11's compiled protos (`apollo-modules`); distances come from shapely:
the path is the approach lane, the junction lane and the lane after it joined into one line; the stop
line's distance is where the signal's stop line crosses that line, the junction's where the line enters
the junction polygon, both measured from the front bumper (3.6986 m ahead of the pose). Each drive is one
run (announced with {"op": "new_run", "run_id": ...}) and follows a routing response of its three lanes.
Traffic lights are published every tick for all signals: the governing one (by id) turns from red to
green half way, the others stay yellow. Prints one JSON object {run_id: [{t, stopline, junction, in_junction, light}]}.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bridge", "examples"))

try:
    from apollo_modules.modules.common_msgs.map_msgs import map_pb2
    from shapely.geometry import LineString, Point, Polygon
    from roslibpy_client import AvguardClient, TickState
except ImportError as e:
    sys.stderr.write(f"missing Python package: {e.name}\n")
    sys.exit(2)

FRONT_M = 3.6986
RED, YELLOW, GREEN = 1, 2, 3


def lane_points(lane):
    return [(p.x, p.y) for seg in lane.central_curve.segment for p in seg.line_segment.point]


def curve_points(curve):
    return [(p.x, p.y) for seg in curve.segment for p in seg.line_segment.point]


def first_s(path, geometry, after=0.0):
    """Smallest arc length (not before `after`) of `path` at which it meets `geometry` (a line or a
    polygon's outline)."""
    inter = path.intersection(geometry)
    if inter.is_empty:
        return None
    pts = [c for g in getattr(inter, "geoms", [inter]) for c in g.coords]
    ss = [path.project(Point(c)) for c in pts]
    ss = [s for s in ss if s >= after]
    return min(ss) if ss else None


def drives(m):
    """(run id, signal id, [lanes]) for every lane a signal governs, approached from its predecessor."""
    lanes = {l.id.id: l for l in m.lane}
    overlaps = {o.id.id: o for o in m.overlap}
    for signal in m.signal:
        for oid in signal.overlap_id:
            for obj in overlaps[oid.id].object:
                lane = lanes.get(obj.id.id)
                if lane is None or not lane.predecessor_id or not lane.successor_id:
                    continue
                path = [lanes[lane.predecessor_id[0].id], lane, lanes[lane.successor_id[0].id]]
                yield f"{signal.id.id}_{lane.id.id}", signal, path


def main():
    port = int(sys.argv[1])
    m = map_pb2.Map()
    with open(sys.argv[2], "rb") as f:
        m.ParseFromString(f.read())
    junctions = [Polygon([(p.x, p.y) for p in j.polygon.point]) for j in m.junction]
    signal_ids = [s.id.id for s in m.signal]
    client = AvguardClient(port=port)
    expected = {}
    try:
        for run_id, signal, lanes in drives(m):
            pts = []
            for lane in lanes:
                for p in lane_points(lane):
                    if not pts or p != pts[-1]:
                        pts.append(p)
            path = LineString(pts)
            approach_len = LineString(lane_points(lanes[0])).length
            stop_s = min(s for s in (first_s(path, LineString(curve_points(c))) for c in signal.stop_line)
                         if s is not None)
            start = max(0.0, approach_len - 60.0)
            junction_s = min(s for s in (first_s(path, j.exterior, start) for j in junctions)
                             if s is not None)
            client.new_run(run_id)
            client.send_route(0.0, [l.id.id for l in lanes])
            end = approach_len + LineString(lane_points(lanes[1])).length * 0.5
            n = int((end - start) / 1.0)
            rows = []
            for k in range(n + 1):
                t = k * 0.1
                s = start + k * 1.0
                a, b = path.interpolate(s), path.interpolate(min(s + 0.5, path.length))
                heading = math.atan2(b.y - a.y, b.x - a.x)
                governing = RED if k < n // 2 else GREEN
                lights = [{"id": sid, "color": governing if sid == signal.id.id else YELLOW, "blink": False}
                          for sid in signal_ids]
                client.publish_tick(TickState(t=t, x=a.x, y=a.y, heading=heading, speed=10.0, lights=lights))
                front = s + FRONT_M
                rows.append({"t": t,
                             "stopline": stop_s - front if front <= stop_s else None,
                             "junction": junction_s - front if front < junction_s else 0.0,
                             "in_junction": s >= junction_s,
                             "light": governing})
            expected[run_id] = rows
    finally:
        client.close()
    print(json.dumps(expected))


if __name__ == "__main__":
    main()
