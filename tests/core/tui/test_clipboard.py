"""The clipboard's image as Pi takes it: one of Pi's four types as it is, another image type
(a BMP from WSLg) converted to PNG, and one that cannot be converted no image at all."""

from __future__ import annotations

import io
from collections.abc import Sequence

import pytest
from PIL import Image

from ctxmodes.tui import clipboard


def _bmp() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), (250, 10, 10)).save(buffer, format="BMP")
    return buffer.getvalue()


def _offering(monkeypatch: pytest.MonkeyPatch, targets: list[str], data: bytes) -> list[str]:
    """An X11 clipboard offering ``targets``, each read as ``data``; the types read."""
    read: list[str] = []

    def run(command: Sequence[str], timeout: float) -> bytes | None:
        if "TARGETS" in command:
            return "\n".join(targets).encode()
        read.append(command[command.index("-t") + 1])
        return data

    monkeypatch.setattr(clipboard, "_run", run)
    return read


def test_one_of_pi_s_types_is_preferred_and_taken_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    read = _offering(monkeypatch, ["TARGETS", "image/bmp", "image/jpeg", "image/png"], b"bytes")
    assert clipboard.read_image({"DISPLAY": ":9"}) == (b"bytes", "image/png")
    assert read == ["image/png"]


def test_another_image_type_is_converted_to_png(monkeypatch: pytest.MonkeyPatch) -> None:
    read = _offering(monkeypatch, ["TARGETS", "text/plain", "image/bmp"], _bmp())
    image = clipboard.read_image({"DISPLAY": ":9"})
    assert image is not None
    data, kind = image
    assert (kind, read) == ("image/png", ["image/bmp"])
    with Image.open(io.BytesIO(data)) as png:
        assert (png.format, png.size) == ("PNG", (4, 3))


def test_an_image_that_cannot_be_converted_is_no_image(monkeypatch: pytest.MonkeyPatch) -> None:
    _offering(monkeypatch, ["TARGETS", "image/bmp"], _bmp()[:30])
    assert clipboard.read_image({"DISPLAY": ":9"}) is None
