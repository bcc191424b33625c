#!/usr/bin/env python3
"""Checks that a screenshot is a PNG of the expected size and not blank.

usage: png-check.py FILE WIDTH HEIGHT   (exit 0 when it is; the reason on stderr otherwise)
Standard library only: the packaging checks run before anything else is installed.
"""
import struct
import sys
import zlib

path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", data[16:24])
assert (w, h) == (want_w, want_h), (w, h)
# The image data, decompressed: a blank window has only a handful of distinct byte values.
pos, idat = 8, b""
while pos + 8 <= len(data):
    n = struct.unpack(">I", data[pos:pos + 4])[0]
    if data[pos + 4:pos + 8] == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
assert len(set(raw)) > 50, "blank image"
