"""Independent decode of a Cyber RT record, for the `avguard import` interop test.

Usage: python3 cyber_record_check.py RECORD
Reads the record container by hand (16-byte section headers: little-endian int32 type, 4 bytes padding,
int64 size; the header section padded to 2048 bytes; chunk bodies hold `SingleMessage`s) with message
classes built here from Cyber's record.proto field numbers, decodes localization and chassis with the
Apollo protos of the `apollo-modules` package, and prints one JSON object: the channels with their
message counts, and per message its channel and the values a frame takes from it.
"""
import json
import struct
import sys

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from apollo_modules.modules.common_msgs.chassis_msgs import chassis_pb2
    from apollo_modules.modules.common_msgs.localization_msgs import localization_pb2
except ImportError as e:
    sys.stderr.write(f"missing Python package: {e.name} (pip install protobuf==3.20.2 apollo-modules==11.0.0)\n")
    sys.exit(2)


def record_classes():
    """SingleMessage / ChunkBody / Header classes from record.proto's field numbers."""
    f = descriptor_pb2.FileDescriptorProto(name="check_record.proto", package="check.cyber", syntax="proto2")
    T = descriptor_pb2.FieldDescriptorProto
    def msg(name, fields):
        m = f.message_type.add(name=name)
        for fname, num, ftype, label, tname in fields:
            fd = m.field.add(name=fname, number=num, type=ftype, label=label)
            if tname:
                fd.type_name = tname
    opt, rep = T.LABEL_OPTIONAL, T.LABEL_REPEATED
    msg("SingleMessage", [("channel_name", 1, T.TYPE_STRING, opt, None),
                          ("time", 2, T.TYPE_UINT64, opt, None),
                          ("content", 3, T.TYPE_BYTES, opt, None)])
    msg("ChunkBody", [("messages", 1, T.TYPE_MESSAGE, rep, ".check.cyber.SingleMessage")])
    msg("Header", [("major_version", 1, T.TYPE_UINT32, opt, None),
                   ("minor_version", 2, T.TYPE_UINT32, opt, None),
                   ("compress", 3, T.TYPE_INT32, opt, None),
                   ("index_position", 6, T.TYPE_UINT64, opt, None),
                   ("message_number", 11, T.TYPE_UINT64, opt, None)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    get = lambda n: message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName(n))
    return get("check.cyber.ChunkBody"), get("check.cyber.Header")


def main():
    data = open(sys.argv[1], "rb").read()
    ChunkBody, Header = record_classes()
    kind, size = struct.unpack_from("<iiq", data, 0)[0], struct.unpack_from("<q", data, 8)[0]
    assert kind == 0, "not a record header"
    header = Header.FromString(data[16:16 + size])
    end = header.index_position or len(data)
    pos = 16 + 2048
    messages = []
    while pos < end:
        kind = struct.unpack_from("<i", data, pos)[0]
        size = struct.unpack_from("<q", data, pos + 8)[0]
        body = data[pos + 16:pos + 16 + size]
        pos += 16 + size
        if kind == 2:  # chunk body
            messages.extend(ChunkBody.FromString(body).messages)
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
