"""Interop check: the stock rosbridge client `roslibpy`, unmodified, talks to `avguard bridge`.

Usage: python3 bridge_roslibpy.py PORT
Looks around first as a client would (roslibpy's rosapi calls: topics, a topic's type, topics of a type,
nodes, and a service the bridge does not provide, which must fail at once rather than time out), then
advertises and publishes Apollo LocalizationEstimate messages (protobuf JSON mapping, camelCase) and a
road context, subscribes to /avguard/intervention, and prints the first intervention received as one JSON
line, with what the rosapi calls returned under "rosapi". Exits non-zero (naming the package) if roslibpy
is missing, or if no intervention arrives in time.
"""
import json
import sys
import threading

try:
    import roslibpy
except ImportError:
    sys.stderr.write("missing Python package: roslibpy (pip install roslibpy)\n")
    sys.exit(2)


def main():
    port = int(sys.argv[1])
    ros = roslibpy.Ros(host="127.0.0.1", port=port)
    ros.run(timeout=10)
    looked = {
        "topics": ros.get_topics(),
        "chassis_type": ros.get_topic_type("/apollo/canbus/chassis"),
        "risk_topics": ros.get_topics_for_type("avguard/Risk"),
        "nodes": ros.get_nodes(),
    }
    try:
        roslibpy.Service(ros, "/rosapi/get_param", "rosapi/GetParam").call(
            roslibpy.ServiceRequest({"name": "/x"}), timeout=5)
        looked["get_param"] = "answered"
    except roslibpy.core.ServiceException as e:
        looked["get_param"] = "failed: " + str(e)
    except Exception as e:  # a timeout, or anything else: not the prompt failure expected
        looked["get_param"] = f"{type(e).__name__}: {e}"
    got = threading.Event()
    received = []

    def on_intervention(msg):
        received.append(msg)
        got.set()

    sub = roslibpy.Topic(ros, "/avguard/intervention", "avguard/Intervention")
    sub.subscribe(on_intervention)
    road = roslibpy.Topic(ros, "/avguard/road_context", "avguard/RoadContext")
    road.advertise()
    pose = roslibpy.Topic(ros, "/apollo/localization/pose", "pb_msgs/LocalizationEstimate")
    pose.advertise()
    road.publish(roslibpy.Message({"stopline_dist": 20.0, "speed_limit": 13.0}))
    for k, x in enumerate([0.0, 1.0, 6.0, 7.0]):
        pose.publish(roslibpy.Message({
            "header": {"timestampSec": 100.0 + k * 0.1, "moduleName": "roslibpy"},
            "measurementTime": 100.0 + k * 0.1,
            "pose": {"position": {"x": x, "y": 0.0, "z": 0.0}, "heading": 0.0,
                     "linearVelocity": {"x": 12.0, "y": 0.0, "z": 0.0}},
        }))
    ok = got.wait(timeout=10)
    ros.terminate()
    if not ok:
        sys.stderr.write("no intervention received within 10 s\n")
        sys.exit(1)
    print(json.dumps({**received[0], "rosapi": looked}))


if __name__ == "__main__":
    main()
