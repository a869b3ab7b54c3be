"""Recognising the image files ``read`` and a prompt's ``@FILE`` attach, by content (Pi's
rules, not the name); :mod:`ctxmodes.tools.image_fit` makes them fit what models take.

Supported: JPEG (not JPEG-LS), PNG (not animated), GIF, WebP and BMP with a plausible
header. Everything else is read as text.
"""

from __future__ import annotations

import struct

#: How much of a file the checks look at (an animated PNG's marker may follow other chunks).
SNIFF_BYTES = 4100

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_BMP_BITS_PER_PIXEL = frozenset({1, 4, 8, 16, 24, 32})


def image_mime_type(head: bytes) -> str | None:
    """The MIME type of a supported image, from the first :data:`SNIFF_BYTES` of a file."""
    if head.startswith(b"\xff\xd8\xff"):
        return None if head[3:4] == b"\xf7" else "image/jpeg"
    if head.startswith(_PNG_SIGNATURE):
        return "image/png" if _is_still_png(head) else None
    if head.startswith(b"GIF"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"BM") and _is_bmp(head):
        return "image/bmp"
    return None


def _is_still_png(head: bytes) -> bool:
    if len(head) < 16 or head[12:16] != b"IHDR" or _u32be(head, 8) != 13:
        return False
    offset = len(_PNG_SIGNATURE)
    while offset + 8 <= len(head):
        kind = head[offset + 4 : offset + 8]
        if kind == b"acTL":  # animation control: an APNG, which providers do not take
            return False
        if kind == b"IDAT":
            return True
        following = offset + 12 + _u32be(head, offset)
        if following <= offset or following > len(head):
            return True
        offset = following
    return True


def _is_bmp(head: bytes) -> bool:
    if len(head) < 26:
        return False
    file_size, pixel_offset, header_size = _u32le(head, 2), _u32le(head, 10), _u32le(head, 14)
    if file_size != 0 and (file_size < 26 or pixel_offset >= file_size):
        return False
    if pixel_offset < 14 + header_size:
        return False
    if header_size == 12:
        planes, bits = struct.unpack_from("<HH", head, 22)
    elif 40 <= header_size <= 124 and len(head) >= 30:
        planes, bits = struct.unpack_from("<HH", head, 26)
    else:
        return False
    return bool(planes == 1 and bits in _BMP_BITS_PER_PIXEL)


def _u32be(data: bytes, offset: int) -> int:
    value: int = struct.unpack_from(">I", data, offset)[0]
    return value


def _u32le(data: bytes, offset: int) -> int:
    value: int = struct.unpack_from("<I", data, offset)[0]
    return value
