from __future__ import annotations

import base64
import struct

import pytest

from ctxmodes.tools._images import image_mime_type


def _png(*chunks: bytes) -> bytes:
    ihdr = struct.pack(">I", 13) + b"IHDR" + b"\x00" * 13 + b"\x00" * 4
    body = b"".join(struct.pack(">I", 0) + kind + b"\x00" * 4 for kind in chunks)
    return b"\x89PNG\r\n\x1a\n" + ihdr + body


def _bmp(header_size: int = 40, planes: int = 1, bits: int = 24) -> bytes:
    head = b"BM" + struct.pack("<IHHI", 1000, 0, 0, 14 + header_size)
    dib = struct.pack("<IiiHH", header_size, 1, 1, planes, bits)
    return head + dib + b"\x00" * 8


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"\xff\xd8\xff\xf7jpeg-ls", None),
        (_png(b"IDAT"), "image/png"),
        (_png(b"acTL", b"IDAT"), None),
        (b"GIF89a....", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (_bmp(), "image/bmp"),
        (_bmp(bits=7), None),
        (b"BMW drivers are a common sight on the autobahn", None),
        (b"plain text", None),
        (b"", None),
    ],
)
def test_image_mime_type(data, expected):
    assert image_mime_type(data) == expected


@pytest.mark.pi
def test_image_detection_agrees_with_pi(pi_node):
    samples = [
        b"\xff\xd8\xff\xe0rest",
        b"\xff\xd8\xff\xf7jpeg-ls",
        _png(b"IDAT"),
        _png(b"acTL", b"IDAT"),
        _png(b"tEXt", b"acTL"),
        b"GIF87a",
        b"RIFF\x00\x00\x00\x00WEBPVP8 ",
        _bmp(),
        _bmp(header_size=12),
        _bmp(planes=2),
        b"BMW drivers are a common sight on the autobahn",
        b"plain text",
    ]
    answers = pi_node(
        "utils/mime.js",
        "const detect = (s) => mod.detectSupportedImageMimeType(Buffer.from(s, 'base64'));\n"
        "process.stdout.write(JSON.stringify(input.map(detect)));\n",
        [base64.b64encode(sample).decode() for sample in samples],
    )
    assert [image_mime_type(sample) for sample in samples] == answers
