"""Real image files for tests that send images through a client and check they arrive."""

from __future__ import annotations

import struct
import zlib


def solid_png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A valid PNG of ``width`` x ``height`` pixels of one colour (clients that decode an
    image before sending it accept it unchanged)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress((b"\x00" + bytes(rgb) * width) * height)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def dot_gif() -> bytes:
    """A valid GIF of one white pixel."""
    return (
        b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00"
        b"!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
    )


def dot_bmp() -> bytes:
    """A valid 24-bit BMP of one black pixel (its row padded to four bytes)."""
    pixels = b"\x00\x00\x00\x00"
    header_size, offset = 40, 14 + 40
    file_header = b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset)
    info = struct.pack("<IiiHHIIiiII", header_size, 1, 1, 1, 24, 0, len(pixels), 0, 0, 0, 0)
    return file_header + info + pixels
