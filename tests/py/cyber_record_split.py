"""Splits a Cyber RT record into numbered segments, as `cyber_recorder` does for a long recording.

Usage: python3 cyber_record_split.py RECORD PREFIX N
Writes PREFIX.record.00000 … PREFIX.record.<N-1>: the record's messages, in their order, cut into N
consecutive parts. Each segment is a complete record of its own: the header section (padded to 2048
bytes, without an index position), the original channel sections, one chunk header and one chunk body.
The container is read and written by hand (cyber_record_proto.py, from Cyber's record.proto field
numbers), so the segments do not come from avguard's own code.
"""
import sys

from cyber_record_proto import record_parts, write_record


def main():
    src, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    header, channels, messages = record_parts(src)
    assert 1 <= n <= len(messages), f"cannot cut {len(messages)} messages into {n} segments"
    cuts = [round(k * len(messages) / n) for k in range(n + 1)]
    for k in range(n):
        write_record(f"{prefix}.record.{k:05d}", header, channels, messages[cuts[k]:cuts[k + 1]])


if __name__ == "__main__":
    main()
