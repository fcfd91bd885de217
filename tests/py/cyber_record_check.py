"""Independent decode of a Cyber RT record, for the `avguard import` interop test.

Usage: python3 cyber_record_check.py RECORD
Reads the record container by hand (16-byte section headers: little-endian int32 type, 4 bytes padding,
int64 size; the header section padded to 2048 bytes; chunk bodies hold `SingleMessage`s) with the message
classes of cyber_record_proto.py (built from Cyber's record.proto field numbers), decodes localization and chassis with the
Apollo protos of the `apollo-modules` package, and prints one JSON object: the channels with their
message counts, and per message its channel and the values a frame takes from it.
"""
import json
import sys

try:
    from apollo_modules.modules.common_msgs.chassis_msgs import chassis_pb2
    from apollo_modules.modules.common_msgs.localization_msgs import localization_pb2
except ImportError as e:
    sys.stderr.write(f"missing Python package: {e.name} (pip install protobuf==3.20.2 apollo-modules==11.0.0)\n")
    sys.exit(2)

from cyber_record_proto import CHUNK_BODY, read_record, record_classes


def main():
    data = open(sys.argv[1], "rb").read()
    ChunkBody, _, _ = record_classes()
    header, sections = read_record(data)
    messages = [m for kind, body in sections if kind == CHUNK_BODY for m in ChunkBody.FromString(body).messages]
    out = {"n_messages": len(messages), "header_message_number": header.message_number,
           "counts": {}, "localization": [], "chassis": []}
    for m in messages:
        out["counts"][m.channel_name] = out["counts"].get(m.channel_name, 0) + 1
        if m.channel_name == "/apollo/localization/pose":
            loc = localization_pb2.LocalizationEstimate.FromString(m.content)
            p = loc.pose
            out["localization"].append({
                "t": loc.measurement_time if loc.HasField("measurement_time") else loc.header.timestamp_sec,
                "x": p.position.x, "y": p.position.y, "z": p.position.z, "heading": p.heading,
                "vx": p.linear_velocity.x, "vy": p.linear_velocity.y})
        elif m.channel_name == "/apollo/canbus/chassis":
            c = chassis_pb2.Chassis.FromString(m.content)
            out["chassis"].append({
                "t": c.header.timestamp_sec, "speed": c.speed_mps if c.HasField("speed_mps") else None,
                "gear": c.gear_location, "throttle": c.throttle_percentage if c.HasField("throttle_percentage") else None,
                "brake": c.brake_percentage if c.HasField("brake_percentage") else None,
                "steering": c.steering_percentage if c.HasField("steering_percentage") else None})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
