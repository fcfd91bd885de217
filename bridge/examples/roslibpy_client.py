"""A simulator client for `avguard bridge`, written with the stock rosbridge client roslibpy.

This is the template for simulators avguard does not ship with (CARLA, SVL, your own): each simulation
tick, turn the simulator's state into the Apollo messages the bridge consumes, publish them, and apply the
interventions the bridge sends back. Copy it and replace `TickState` filling with your simulator's API.

What goes over the wire (docs/INTERFACES.md section 3), every tick, localization last because it closes
the tick's frame:
  /apollo/canbus/chassis            gear, pedals, steering, turn signal, beams, horn, hazard
  /apollo/perception/obstacles      other road users (id, type, position, heading, velocity, size)
  /apollo/perception/traffic_light  detected lights by HD-map signal id (with `--map` the bridge picks the
                                    one governing the ego's path by id)
  /avguard/road_context             road fields, only for a simulator without an Apollo HD map (without
                                    `avguard bridge --map`): distances to stop line, junction, ...
  /apollo/localization/pose         ego pose, heading, velocity, acceleration
and once per route, /apollo/routing_response (the lanes the ego will follow) when the bridge has a map.
Interventions arrive on /avguard/intervention; `/avguard/risk` carries the per-frame risk and is used
here for lock-step (wait until the bridge has stepped the frame before the next tick).

A new scenario on the same connection is a new run for the bridge (fresh monitor state): either let its
clock start again or jump, or say so with `client.new_run(run_id)`.

Try it against a running bridge (`avguard bridge --model model.bin --log pred.jsonl`) by replaying
recorded HDF5 logs as if they were a simulator, one run after another on one connection:

    python bridge/examples/roslibpy_client.py --port 9090 --offset-s 1000 LOG.h5 [LOG.h5 ...]

It prints one JSON line per run with the interventions received. Needs roslibpy (and h5py for the
replay); the project's environment target/venv has both (`cargo xtask setup`).
"""
import argparse
import json
import math
import sys
import threading
from dataclasses import dataclass, field
from typing import Callable, List, Optional

import roslibpy


@dataclass
class Obstacle:
    """Another road user. `kind` is Apollo's PerceptionObstacle.Type: 3 pedestrian, 4 bicycle, 5 vehicle."""
    id: int
    kind: int
    x: float
    y: float
    heading: float
    speed: float
    length: float
    width: float


@dataclass
class TickState:
    """One simulation tick: what a simulator knows about the ego and its surroundings (SI units, map frame
    ENU, headings in radians with 0 = east). `road` holds the road fields for a simulator without an HD
    map (keys of INTERFACES section 2, e.g. {"stopline_dist": 12.0}); leave it None with `--map`."""
    t: float
    x: float
    y: float
    heading: float
    speed: float
    accel: float = 0.0
    z: float = 0.0
    gear: int = 1
    throttle: float = 0.0
    brake: float = 0.0
    steering: float = 0.0
    turn_signal: int = 0
    horn: bool = False
    high_beam: bool = False
    low_beam: bool = False
    hazard: bool = False
    obstacles: List[Obstacle] = field(default_factory=list)
    lights: List[dict] = field(default_factory=list)  # [{"id": signal id, "color": 1..4, "blink": bool}]
    road: Optional[dict] = None


def _header(t):
    return {"timestamp_sec": t, "module_name": "roslibpy_client"}


class AvguardClient:
    """One websocket connection to the bridge. `on_intervention(msg)` is called (from roslibpy's thread)
    for every intervention; with `lockstep`, `publish_tick` returns once the bridge has stepped the tick."""

    TOPICS = {
        "chassis": ("/apollo/canbus/chassis", "pb_msgs/Chassis"),
        "obstacles": ("/apollo/perception/obstacles", "pb_msgs/PerceptionObstacles"),
        "lights": ("/apollo/perception/traffic_light", "pb_msgs/TrafficLightDetection"),
        "road": ("/avguard/road_context", "avguard/RoadContext"),
        "pose": ("/apollo/localization/pose", "pb_msgs/LocalizationEstimate"),
        "routing": ("/apollo/routing_response", "pb_msgs/RoutingResponse"),
        "control": ("/avguard/control", "avguard/Control"),
    }

    def __init__(self, host="127.0.0.1", port=9090, on_intervention: Optional[Callable] = None,
                 lockstep=True, timeout_s=10.0):
        self.ros = roslibpy.Ros(host=host, port=port)
        self.ros.run(timeout=timeout_s)
        self.timeout_s = timeout_s
        self.lockstep = lockstep
        self.topics = {k: roslibpy.Topic(self.ros, name, kind) for k, (name, kind) in self.TOPICS.items()}
        for topic in self.topics.values():
            topic.advertise()
        self._stepped = threading.Condition()
        self._last_stamp = -math.inf
        self._on_intervention = on_intervention or (lambda msg: None)
        roslibpy.Topic(self.ros, "/avguard/intervention", "avguard/Intervention").subscribe(
            self._on_intervention)
        if lockstep:
            roslibpy.Topic(self.ros, "/avguard/risk", "avguard/Risk").subscribe(self._on_risk)

    def _on_risk(self, msg):
        with self._stepped:
            self._last_stamp = msg["stamp"]
            self._stepped.notify_all()

    def _publish(self, key, msg):
        self.topics[key].publish(roslibpy.Message(msg))

    def new_run(self, run_id=None):
        """Tells the bridge that a new run starts with the next tick (fresh monitor state)."""
        msg = {"op": "new_run"}
        if run_id is not None:
            msg["run_id"] = str(run_id)
        self._publish("control", msg)
        with self._stepped:
            self._last_stamp = -math.inf

    def send_route(self, t, lane_ids):
        """The lanes the ego will follow (one road segment per lane), for a bridge with an HD map."""
        self._publish("routing", {"header": _header(t), "road": [
            {"id": f"road_{i}", "passage": [{"segment": [{"id": lane}]}]} for i, lane in enumerate(lane_ids)]})

    def publish_tick(self, s: TickState):
        """Publishes one tick's messages, localization last; in lock-step, waits for the bridge's frame."""
        c, n = math.cos(s.heading), math.sin(s.heading)
        self._publish("chassis", {
            "header": _header(s.t), "gear_location": s.gear, "throttle_percentage": s.throttle,
            "brake_percentage": s.brake, "steering_percentage": s.steering,
            # No speed_mps: Apollo's speedometer is a float32 and the bridge would prefer it to the
            # pose velocity; send it if your simulator has a real speedometer.
            "signal": {"turn_signal": s.turn_signal, "high_beam": s.high_beam, "low_beam": s.low_beam,
                       "horn": s.horn, "emergency_light": s.hazard}})
        self._publish("obstacles", {"header": _header(s.t), "perception_obstacle": [{
            "id": o.id, "type": o.kind, "position": {"x": o.x, "y": o.y, "z": 0.0}, "theta": o.heading,
            "velocity": {"x": o.speed * math.cos(o.heading), "y": o.speed * math.sin(o.heading), "z": 0.0},
            "length": o.length, "width": o.width} for o in s.obstacles]})
        self._publish("lights", {"header": _header(s.t), "contain_lights": bool(s.lights),
                                 "traffic_light": s.lights})
        if s.road is not None:
            self._publish("road", dict(s.road, stamp=s.t))
        self._publish("pose", {
            "header": _header(s.t), "measurement_time": s.t,
            "pose": {"position": {"x": s.x, "y": s.y, "z": s.z}, "heading": s.heading,
                     "linear_velocity": {"x": s.speed * c, "y": s.speed * n, "z": 0.0},
                     "linear_acceleration": {"x": s.accel * c, "y": s.accel * n, "z": 0.0}}})
        if self.lockstep:
            with self._stepped:
                ok = self._stepped.wait_for(lambda: self._last_stamp >= s.t - 1e-6, timeout=self.timeout_s)
            if not ok:
                raise TimeoutError(f"the bridge did not step the frame at t={s.t} within {self.timeout_s} s")

    def close(self):
        self.ros.terminate()


def apply_intervention(sim_speed_cap, msg):
    """What a simulator does with an intervention: `slow_down` caps the ego's speed at the target,
    `stop` brings it to a halt, `alert` only informs; the episode ends when a later message for the same
    property has no action (see INTERFACES section 3). Returns the new speed cap in m/s (None = no cap)."""
    action = msg.get("action")
    if action == "stop":
        return 0.0
    if action == "slow_down" and msg.get("target_speed_mps") is not None:
        return msg["target_speed_mps"]
    return sim_speed_cap


# ---- Replaying HDF5 run logs (INTERFACES section 2) as a simulator -------------------------------------

ROAD_FIELDS = ["stopline_dist", "junction_dist", "crosswalk_dist", "stopsign_dist", "speed_limit"]


def read_log(path, offset_s=0.0):
    """Yields the TickStates of one HDF5 run log, times shifted by `offset_s`."""
    import h5py
    with h5py.File(path, "r") as f:
        fr = {k: f["frames"][k][()] for k in f["frames"].keys()}
        ob = {k: f["obstacles"][k][()] for k in f["obstacles"].keys()}
    flag = lambda k, i: bool(fr[k][i]) if k in fr else False
    for i in range(len(fr["t"])):
        lo, hi = int(ob["offset"][i]), int(ob["offset"][i + 1])
        obstacles = [Obstacle(int(ob["id"][j]), int(ob["type"][j]), float(ob["x"][j]), float(ob["y"][j]),
                              float(ob["heading"][j]), float(ob["speed"][j]), float(ob["length"][j]),
                              float(ob["width"][j])) for j in range(lo, hi)]
        road = {k: (None if math.isinf(fr[k][i]) else float(fr[k][i])) for k in ROAD_FIELDS}
        road.update({"lane_number": int(fr["lane_number"][i]), "planned_turn": int(fr["planned_turn"][i]),
                     "signal_ahead": flag("signal_ahead", i), "traffic_jam": flag("traffic_jam", i),
                     "light_color": int(fr["light_color"][i]), "light_blink": flag("light_blink", i),
                     "destination": flag("destination", i), "collision": flag("collision", i),
                     "priority": [int(ob["id"][j]) for j in range(lo, hi) if ob["priority"][j]]})
        color = int(fr["light_color"][i])
        yield TickState(
            t=float(fr["t"][i]) + offset_s, x=float(fr["x"][i]), y=float(fr["y"][i]), z=float(fr["z"][i]),
            heading=float(fr["heading"][i]), speed=float(fr["speed"][i]), accel=float(fr["accel"][i]),
            gear=int(fr["gear"][i]), throttle=float(fr["throttle"][i]), brake=float(fr["brake"][i]),
            steering=float(fr["steering"][i]), turn_signal=int(fr["turn_signal"][i]),
            horn=flag("horn", i), high_beam=flag("high_beam", i), low_beam=flag("low_beam", i),
            hazard=flag("hazard", i), obstacles=obstacles,
            lights=[{"id": "ego_lane", "color": color, "blink": flag("light_blink", i)}] if color else [],
            road=road)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9090)
    ap.add_argument("--offset-s", type=float, default=1000.0,
                    help="run k is replayed with its times shifted by k times this (its own clock)")
    ap.add_argument("--explicit-runs", action="store_true",
                    help="also announce each run with {\"op\": \"new_run\"} (run id = the log's file name)")
    ap.add_argument("logs", nargs="+", help="HDF5 run logs (INTERFACES section 2)")
    args = ap.parse_args()
    received = []
    client = AvguardClient(args.host, args.port, on_intervention=received.append)
    try:
        for k, path in enumerate(args.logs):
            if args.explicit_runs and k > 0:
                client.new_run(path.rsplit("/", 1)[-1])
            start = len(received)
            for tick in read_log(path, offset_s=k * args.offset_s):
                client.publish_tick(tick)
            print(json.dumps({"log": path, "offset_s": k * args.offset_s,
                              "interventions": received[start:]}), flush=True)
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(main())
