"""Writes a Cyber RT record holding a record's drive twice: as recorded, then again SHIFT seconds later.

Usage: python3 cyber_record_twice.py RECORD OUT SHIFT
Every message is written twice; in the second copy the times a frame is assembled from — the header
`timestamp_sec` of localization, chassis and routing messages, and localization's `measurement_time` —
and the record's own message time are SHIFT seconds later (decoded and encoded with the Apollo protos of
`apollo-modules`; other channels are copied as they are). The container is written by hand
(cyber_record_proto.py).
"""
import sys

try:
    from apollo_modules.modules.common_msgs.chassis_msgs import chassis_pb2
    from apollo_modules.modules.common_msgs.localization_msgs import localization_pb2
    from apollo_modules.modules.common_msgs.routing_msgs import routing_pb2
except ImportError as e:
    sys.stderr.write(f"missing Python package: {e.name} (pip install protobuf==3.20.2 apollo-modules==11.0.0)\n")
    sys.exit(2)

from cyber_record_proto import record_classes, record_parts, write_record

TYPES = {
    "/apollo/localization/pose": localization_pb2.LocalizationEstimate,
    "/apollo/canbus/chassis": chassis_pb2.Chassis,
    "/apollo/routing_response": routing_pb2.RoutingResponse,
    "/apollo/routing_response_history": routing_pb2.RoutingResponse,
}


def shifted(m, shift):
    ChunkBody, _, _ = record_classes()
    out = ChunkBody().messages.add()
    out.CopyFrom(m)
    out.time = m.time + int(round(shift * 1e9))
    kind = TYPES.get(m.channel_name)
    if kind is not None:
        msg = kind.FromString(m.content)
        if msg.header.HasField("timestamp_sec"):
            msg.header.timestamp_sec += shift
        if kind is localization_pb2.LocalizationEstimate and msg.HasField("measurement_time"):
            msg.measurement_time += shift
        out.content = msg.SerializeToString()
    return out


def main():
    src, dst, shift = sys.argv[1], sys.argv[2], float(sys.argv[3])
    header, channels, messages = record_parts(src)
    write_record(dst, header, channels, list(messages) + [shifted(m, shift) for m in messages])


if __name__ == "__main__":
    main()
