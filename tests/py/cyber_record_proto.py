"""Cyber RT's record container messages, built here from record.proto's field numbers (not from avguard's
protos), for the independent record scripts of the Apollo interop tests.

`record_classes()` returns the message classes `ChunkBody`, `ChunkHeader` and `Header` (with
`SingleMessage` inside `ChunkBody.messages`). Header fields not declared here are kept as unknown fields
when a header is parsed and written again.
"""
import functools
import struct
import sys

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError as e:
    sys.stderr.write(f"missing Python package: {e.name} (pip install protobuf==3.20.2)\n")
    sys.exit(2)

# Section types of the container (16-byte section headers: little-endian int32 type, 4 bytes padding,
# int64 size; the header section's payload is padded to HEADER_BYTES).
HEADER, CHUNK_HEADER, CHUNK_BODY, INDEX, CHANNEL = 0, 1, 2, 3, 4
HEADER_BYTES = 2048


@functools.cache
def record_classes():
    """ChunkBody / ChunkHeader / Header classes from record.proto's field numbers (built once)."""
    f = descriptor_pb2.FileDescriptorProto(name="check_record.proto", package="check.cyber", syntax="proto2")
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
    msg("ChunkBody", [("messages", 1, T.TYPE_MESSAGE, rep, ".check.cyber.SingleMessage")])
    msg("ChunkHeader", [("begin_time", 1, T.TYPE_UINT64, opt, None),
                        ("end_time", 2, T.TYPE_UINT64, opt, None),
                        ("message_number", 3, T.TYPE_UINT64, opt, None),
                        ("raw_size", 4, T.TYPE_UINT64, opt, None)])
    msg("Header", [("major_version", 1, T.TYPE_UINT32, opt, None),
                   ("minor_version", 2, T.TYPE_UINT32, opt, None),
                   ("compress", 3, T.TYPE_INT32, opt, None),
                   ("index_position", 6, T.TYPE_UINT64, opt, None),
                   ("message_number", 11, T.TYPE_UINT64, opt, None)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    factory = message_factory.MessageFactory(pool)
    get = lambda n: factory.GetPrototype(pool.FindMessageTypeByName(f"check.cyber.{n}"))
    return get("ChunkBody"), get("ChunkHeader"), get("Header")


def read_record(data):
    """The header (a `Header`) and the sections after it up to the index, as (type, payload) pairs."""
    _, _, Header = record_classes()
    kind, size = struct.unpack_from("<iiq", data, 0)[0], struct.unpack_from("<q", data, 8)[0]
    assert kind == HEADER, "not a record header"
    header = Header.FromString(data[16:16 + size])
    end = header.index_position or len(data)
    pos = 16 + HEADER_BYTES
    sections = []
    while pos < end:
        kind = struct.unpack_from("<i", data, pos)[0]
        size = struct.unpack_from("<q", data, pos + 8)[0]
        sections.append((kind, data[pos + 16:pos + 16 + size]))
        pos += 16 + size
    return header, sections


def section(kind, body, pad_to=None):
    """One section: its 16-byte header and its payload (padded to `pad_to` bytes when given)."""
    payload = body if pad_to is None else body + b"\0" * (pad_to - len(body))
    return struct.pack("<iiq", kind, 0, len(body)) + payload


def write_record(path, header, channel_sections, messages):
    """A complete record at `path`: `header` (a `Header`, written without an index position), the channel
    sections as read, and `messages` (`SingleMessage`s) in one chunk."""
    ChunkBody, ChunkHeader, Header = record_classes()
    h = Header()
    h.CopyFrom(header)
    h.index_position = 0
    h.message_number = len(messages)
    body = ChunkBody()
    body.messages.extend(messages)
    times = [m.time for m in messages]
    chunk_header = ChunkHeader(begin_time=min(times), end_time=max(times), message_number=len(messages),
                               raw_size=body.ByteSize())
    with open(path, "wb") as out:
        out.write(section(HEADER, h.SerializeToString(), pad_to=HEADER_BYTES))
        for kind, payload in channel_sections:
            out.write(section(kind, payload))
        out.write(section(CHUNK_HEADER, chunk_header.SerializeToString()))
        out.write(section(CHUNK_BODY, body.SerializeToString()))


def record_parts(path):
    """The header, the channel sections and the messages of the record at `path`."""
    ChunkBody, _, _ = record_classes()
    header, sections = read_record(open(path, "rb").read())
    channels = [(kind, body) for kind, body in sections if kind == CHANNEL]
    messages = [m for kind, body in sections if kind == CHUNK_BODY for m in ChunkBody.FromString(body).messages]
    return header, channels, messages
