"""Splits a Cyber RT record into numbered segments, as `cyber_recorder` does for a long recording.

Usage: python3 cyber_record_split.py RECORD PREFIX N
Writes PREFIX.record.00000 … PREFIX.record.<N-1>: the record's messages, in their order, cut into N
consecutive parts. Each segment is a complete record of its own: the header section (padded to 2048
bytes, without an index position), the original channel sections, one chunk header and one chunk body.
The container is read and written by hand here, with the message classes of cyber_record_proto.py (built
from Cyber's record.proto field numbers), so the segments do not come from avguard's own code.
"""
import struct
import sys

from cyber_record_proto import CHANNEL, CHUNK_BODY, CHUNK_HEADER, HEADER, HEADER_BYTES, read_record, record_classes


def section(kind, body, pad_to=None):
    payload = body if pad_to is None else body + b"\0" * (pad_to - len(body))
    return struct.pack("<iiq", kind, 0, len(body)) + payload


def main():
    src, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = open(src, "rb").read()
    ChunkBody, ChunkHeader, Header = record_classes()
    header, sections = read_record(data)  # unknown header fields (version, sizes) are kept
    channels = [section(CHANNEL, body) for kind, body in sections if kind == CHANNEL]
    messages = [m for kind, body in sections if kind == CHUNK_BODY for m in ChunkBody.FromString(body).messages]
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
