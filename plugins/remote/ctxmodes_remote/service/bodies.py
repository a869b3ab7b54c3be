"""Reading request bodies with bounded memory and time.

aiohttp's own decoding of ``Content-Encoding`` decompresses ahead of the reader, so a small
zstd bomb grows the process by its whole decompressed size before the size limit is checked.
The service turns that decoding off and decompresses here instead, in slices no larger than
what is left under the limit: a body that would decompress past the limit is refused once
the limit is reached, holding at most the limit (plus one read's slice) in memory. Every
read of the body that has to wait for more also has an idle timeout, so a client that stops
sending mid-body does not hold a connection and its buffers forever.
"""

from __future__ import annotations

import asyncio
import zlib
from typing import Protocol

from aiohttp import web

from ctxmodes import CtxmodesError

#: The most bytes decoded at a time: a small slice, so the body is the one large buffer.
DECODE_SLICE = 256 * 1024


class BodyTooLargeError(CtxmodesError):
    """The body (after decompression) is larger than the service accepts."""


class BodyEncodingError(CtxmodesError):
    """The body's ``Content-Encoding`` is unknown, or the body does not decode under it."""


class BodyTimeoutError(CtxmodesError):
    """The client stopped sending the body."""


class _DecodeError(Exception):
    """Raised by a decoder for data its encoding does not decode."""


class _Decoder(Protocol):
    def feed(self, data: bytes, room: int) -> bytes:
        """Up to ``room`` more decoded bytes, consuming ``data`` (and what is pending)."""
        ...

    @property
    def pending(self) -> bool:
        """Whether decoded bytes may be waiting without more input."""
        ...


class _ZstdDecoder:
    def __init__(self) -> None:
        from backports.zstd import ZstdDecompressor, ZstdError

        self._new = ZstdDecompressor
        self._error = ZstdError
        self._decompressor = ZstdDecompressor()

    def feed(self, data: bytes, room: int) -> bytes:
        if self._decompressor.eof:
            # Concatenated frames: the next one starts in what the last left unused.
            data = self._decompressor.unused_data + data
            if not data:
                return b""
            self._decompressor = self._new()
        try:
            return bytes(self._decompressor.decompress(data, room))
        except self._error as exc:
            raise _DecodeError(str(exc)) from None

    @property
    def pending(self) -> bool:
        done = self._decompressor
        return (not done.eof and not done.needs_input) or (done.eof and bool(done.unused_data))


class _ZlibDecoder:
    def __init__(self, wbits: int) -> None:
        self._decompressor = zlib.decompressobj(wbits)

    def feed(self, data: bytes, room: int) -> bytes:
        try:
            return self._decompressor.decompress(self._decompressor.unconsumed_tail + data, room)
        except zlib.error as exc:
            raise _DecodeError(str(exc)) from None

    @property
    def pending(self) -> bool:
        return bool(self._decompressor.unconsumed_tail)


def _decoder(encoding: str) -> _Decoder | None:
    """``None`` for a body sent as it is."""
    if encoding in ("", "identity"):
        return None
    if encoding == "zstd":
        try:
            return _ZstdDecoder()
        except ImportError:
            raise BodyEncodingError("zstd bodies need the serve extra") from None
    if encoding in ("gzip", "x-gzip"):
        return _ZlibDecoder(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return _ZlibDecoder(zlib.MAX_WBITS)
    raise BodyEncodingError(f"unsupported Content-Encoding {encoding!r}")


async def read_body(request: web.Request, limit: int, idle_timeout_s: float) -> bytearray:
    """The whole body, decoded (not copied again: JSON parsers take a ``bytearray``).

    :raises BodyTooLargeError: more than ``limit`` bytes, sent or decoded.
    :raises BodyEncodingError: an unknown encoding, or data it does not decode.
    :raises BodyTimeoutError: nothing arrived for ``idle_timeout_s``.
    """
    decoder = _decoder(request.headers.get("Content-Encoding", "").strip().lower())
    content = request.content
    body = bytearray()
    received = 0
    while True:
        # What has arrived already is taken without a timer (most bodies come whole with
        # their headers); only a read that has to wait is bounded by the idle timeout.
        chunk = content.read_nowait()
        if not chunk and not content.at_eof():
            try:
                async with asyncio.timeout(idle_timeout_s):
                    chunk = await content.readany()
            except TimeoutError:
                raise BodyTimeoutError(f"no body data for {idle_timeout_s:g} s") from None
        if not chunk:
            break
        received += len(chunk)
        if received > limit:
            raise BodyTooLargeError(f"the body is larger than {limit} bytes")
        if decoder is None:
            body += chunk
            continue
        try:
            # At most one byte more than fits, so a body that goes over is seen to.
            body += decoder.feed(chunk, min(DECODE_SLICE, limit - len(body) + 1))
            while decoder.pending and len(body) <= limit:
                piece = decoder.feed(b"", min(DECODE_SLICE, limit - len(body) + 1))
                if not piece:
                    break
                body += piece
        except _DecodeError as exc:
            raise BodyEncodingError(f"the body does not decode: {exc}") from None
        if len(body) > limit:
            raise BodyTooLargeError(f"the body decompresses past {limit} bytes")
    return body
