"""Splits a Cyber RT record into numbered segments, as `cyber_recorder` does for a long recording.

Usage: python3 cyber_record_split.py RECORD PREFIX N
Writes PREFIX.record.00000 … PREFIX.record.<N-1>: the record's messages, in their order, cut into N
consecutive parts. Each segment is a complete record of its own: the header section (padded to 2048
bytes, without an index position), the original channel sections, one chunk header and one chunk body.
The container is read and written by hand here (16-byte section headers: little-endian int32 type, 4
bytes padding, int64 size), with message classes built from Cyber's record.proto field numbers, so the
segments do not come from avguard's own reader.
"""
import struct
import sys

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError as e:
    sys.stderr.write(f"missing Python package: {e.name} (pip install protobuf==3.20.2)\n")
    sys.exit(2)

HEADER, CHUNK_HEADER, CHUNK_BODY, INDEX, CHANNEL = 0, 1, 2, 3, 4
HEADER_BYTES = 2048


def record_classes():
    """SingleMessage / ChunkBody / ChunkHeader / Header classes from record.proto's field numbers."""
    f = descriptor_pb2.FileDescriptorProto(name="split_record.proto", package="split.cyber", syntax="proto2")
    T = descriptor_pb2.FieldDescriptorProto
    opt, rep = T.LABEL_OPTIONAL, T.LABEL_REPEATED

    def msg(name, fields):
        m = f.message_type.add(name=name)
        for fname, num, ftype, label, tname in fields:
            fd = m.field.add(name=fname, number=num, type=ftype, label=label)
            if tname:
                fd.type_name = tname

    msg("SingleMessage", [("channel_name", 1, T.TYPE_STRING, opt, None),
                          ("time", 2, T.TYPE_UINT64, opt, None),
                          ("content", 3, T.TYPE_BYTES, opt, None)])
    msg("ChunkBody", [("messages", 1, T.TYPE_MESSAGE, rep, ".split.cyber.SingleMessage")])
    msg("ChunkHeader", [("begin_time", 1, T.TYPE_UINT64, opt, None),
                        ("end_time", 2, T.TYPE_UINT64, opt, None),
                        ("message_number", 3, T.TYPE_UINT64, opt, None),
                        ("raw_size", 4, T.TYPE_UINT64, opt, None)])
    msg("Header", [("index_position", 6, T.TYPE_UINT64, opt, None),
                   ("message_number", 11, T.TYPE_UINT64, opt, None)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    get = lambda n: message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName(n))
    return [get(f"split.cyber.{n}") for n in ("ChunkBody", "ChunkHeader", "Header")]


def section(kind, body, pad_to=None):
    payload = body if pad_to is None else body + b"\0" * (pad_to - len(body))
    return struct.pack("<iiq", kind, 0, len(body)) + payload


def main():
    src, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = open(src, "rb").read()
    ChunkBody, ChunkHeader, Header = record_classes()
    kind, size = struct.unpack_from("<i", data, 0)[0], struct.unpack_from("<q", data, 8)[0]
    assert kind == HEADER, "not a record header"
    header = Header.FromString(data[16:16 + size])  # unknown fields (version, sizes) are kept
    end = header.index_position or len(data)
    pos = 16 + HEADER_BYTES
    channels, messages = [], []
    while pos < end:
        kind = struct.unpack_from("<i", data, pos)[0]
        size = struct.unpack_from("<q", data, pos + 8)[0]
        body = data[pos + 16:pos + 16 + size]
        pos += 16 + size
        if kind == CHANNEL:
            channels.append(section(CHANNEL, body))
        elif kind == CHUNK_BODY:
            messages.extend(ChunkBody.FromString(body).messages)
    assert 1 <= n <= len(messages), f"cannot cut {len(messages)} messages into {n} segments"
    cuts = [round(k * len(messages) / n) for k in range(n + 1)]
    for k in range(n):
        part = messages[cuts[k]:cuts[k + 1]]
        h = Header()
        h.CopyFrom(header)
        h.index_position = 0
        h.message_number = len(part)
        body = ChunkBody()
        body.messages.extend(part)
        times = [m.time for m in part]
        chunk_header = ChunkHeader(begin_time=min(times), end_time=max(times), message_number=len(part),
                                   raw_size=body.ByteSize())
        with open(f"{prefix}.record.{k:05d}", "wb") as out:
            out.write(section(HEADER, h.SerializeToString(), pad_to=HEADER_BYTES))
            for c in channels:
                out.write(c)
            out.write(section(CHUNK_HEADER, chunk_header.SerializeToString()))
            out.write(section(CHUNK_BODY, body.SerializeToString()))


if __name__ == "__main__":
    main()
