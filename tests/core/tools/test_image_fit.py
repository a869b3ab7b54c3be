"""Fitting images to what models take, as Pi 0.85's ``processImage`` does: which images go
as they are, the sizes and types of the others, and Pi's texts. The encoded bytes are
Pillow's, so only their decoded size and type are checked."""

from __future__ import annotations

import base64
import io
import os
import struct
import time
import zlib

import pytest
from PIL import Image
from support.images import solid_png

from ctxmodes.session.models import ImageContent, TextContent
from ctxmodes.tools import image_fit
from ctxmodes.tools.image_fit import (
    MAX_BASE64_BYTES,
    NOT_CONVERTED,
    NOT_RESIZED,
    FittedImage,
    OmittedImage,
    convert_to_png,
    fit_image,
    fit_result_images,
)


def _encoded(image: Image.Image, kind: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=kind, **options)
    return buffer.getvalue()


def _flat(width: int, height: int, kind: str = "PNG") -> bytes:
    return _encoded(Image.new("RGB", (width, height), (40, 120, 200)), kind)


def _fitted(data: bytes, mime_type: str, **options: bool) -> FittedImage:
    fitted = fit_image(data, mime_type, **options)
    assert isinstance(fitted, FittedImage), fitted
    return fitted


def _size_and_format(fitted: FittedImage) -> tuple[tuple[int, int], str | None]:
    with Image.open(io.BytesIO(base64.b64decode(fitted.data))) as image:
        return image.size, image.format


def _note(original: tuple[int, int], shown: tuple[int, int], scale: str) -> str:
    return (
        f"[Image: original {original[0]}x{original[1]}, displayed at {shown[0]}x{shown[1]}. "
        f"Multiply coordinates by {scale} to map to original image.]"
    )


def _header_only_png(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` and whose pixels are a few bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0" * 64))
        + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize(
    ("data", "mime_type"),
    [
        (solid_png(3, 2, (1, 2, 3)), "image/png"),
        (_flat(2000, 2000, "JPEG"), "image/jpeg"),
        (_flat(40, 30, "GIF"), "image/gif"),
        (_flat(40, 30, "WEBP"), "image/webp"),
    ],
    ids=["png", "jpeg-at-the-limit", "gif", "webp"],
)
def test_an_image_within_the_limits_goes_byte_for_byte(data: bytes, mime_type: str) -> None:
    assert fit_image(data, mime_type) == FittedImage(base64.b64encode(data).decode(), mime_type)


def test_pi_s_spellings_of_a_type_are_normalised() -> None:
    data = _flat(10, 10, "JPEG")
    assert _fitted(data, "image/JPG; q=1").mime_type == "image/jpeg"


def test_a_wide_image_is_2000_wide_and_its_height_rounded_half_up() -> None:
    # 1001 * 2000 / 4000 = 500.5: JavaScript's Math.round gives 501, Python's round 500.
    fitted = _fitted(_flat(4000, 1001), "image/png")
    assert _size_and_format(fitted) == ((2000, 501), "PNG")
    assert (fitted.mime_type, fitted.hints) == (
        "image/png",
        (_note((4000, 1001), (2000, 501), "2.00"),),
    )


def test_a_tall_image_is_2000_high_and_its_width_rounded_half_up() -> None:
    fitted = _fitted(_flat(1001, 4000), "image/png")
    assert _size_and_format(fitted) == ((501, 2000), "PNG")
    assert fitted.hints == (_note((1001, 4000), (501, 2000), "2.00"),)


def test_the_scale_is_rounded_as_javascript_s_to_fixed_rounds_a_tie() -> None:
    # 2250 / 2000 = 1.125 exactly: toFixed(2) gives 1.13, Python's format 1.12.
    fitted = _fitted(_flat(2250, 900), "image/png")
    assert fitted.hints == (_note((2250, 900), (2000, 800), "1.13"),)


def test_a_flat_huge_image_stays_png() -> None:
    fitted = _fitted(_flat(3000, 1200), "image/png")
    assert fitted.mime_type == "image/png"
    assert _size_and_format(fitted) == ((2000, 800), "PNG")


@pytest.mark.slow  # encodes images at full size
def test_a_noisy_image_too_large_as_png_is_sent_as_jpeg_at_its_own_size() -> None:
    """Within 2000 pixels a side but over 4.5 MiB: resized to the same size, where PNG is
    still too large, so the first JPEG quality under the limit wins."""
    noisy = Image.frombytes("RGB", (1900, 1000), os.urandom(1900 * 1000 * 3))
    data = _encoded(noisy, "PNG", compress_level=1)
    assert len(data) * 4 / 3 > MAX_BASE64_BYTES
    fitted = _fitted(data, "image/png")
    assert fitted.mime_type == "image/jpeg"
    assert _size_and_format(fitted) == ((1900, 1000), "JPEG")
    assert len(fitted.data) < MAX_BASE64_BYTES
    assert fitted.hints == (_note((1900, 1000), (1900, 1000), "1.00"),)


@pytest.mark.slow  # encodes images at every size
def test_when_no_encoding_fits_both_sides_shrink_by_a_quarter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a limit no encoding at 2000x800 meets, the sides shrink as Pi's do (floored
    three quarters each time) until one does."""
    monkeypatch.setattr(image_fit, "MAX_BASE64_BYTES", 3000)
    fitted = _fitted(_flat(3000, 1200), "image/png")
    steps = [(2000, 800)]
    while steps[-1] != (1, 1):
        width, height = steps[-1]
        steps.append((max(1, width * 3 // 4), max(1, height * 3 // 4)))
    size, _ = _size_and_format(fitted)
    assert size in steps[1:]
    assert len(fitted.data) < 3000
    assert fitted.hints == (_note((3000, 1200), size, f"{3000 / size[0]:.2f}"),)


@pytest.mark.slow  # encodes images at every size
def test_an_image_that_fits_at_no_size_is_omitted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(image_fit, "MAX_BASE64_BYTES", 10)
    assert fit_image(_flat(3000, 1200), "image/png") == OmittedImage(NOT_RESIZED)


def _jpeg_turned(width: int, height: int, orientation: int, kind: str = "JPEG") -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    return _encoded(Image.new("RGB", (width, height), (9, 9, 9)), kind, exif=exif.tobytes())


@pytest.mark.parametrize(("kind", "mime_type"), [("JPEG", "image/jpeg"), ("WEBP", "image/webp")])
def test_a_jpeg_or_webp_is_measured_upright_by_its_exif_orientation(
    kind: str, mime_type: str
) -> None:
    """Stored 1500x2100 and turned a quarter (orientation 6): upright 2100x1500, so too
    wide, and shrunk to 2000 wide."""
    fitted = _fitted(_jpeg_turned(1500, 2100, 6, kind), mime_type)
    assert _size_and_format(fitted) == ((2000, 1429), "PNG")
    assert fitted.hints == (_note((2100, 1500), (2000, 1429), "1.05"),)


def test_a_png_s_exif_orientation_is_not_read_as_pi_reads_none() -> None:
    fitted = _fitted(_jpeg_turned(1500, 2100, 6, "PNG"), "image/png")
    assert _size_and_format(fitted) == ((1429, 2000), "PNG")


def test_a_turned_jpeg_within_the_limits_keeps_its_bytes_and_its_orientation() -> None:
    data = _jpeg_turned(300, 200, 6)
    assert fit_image(data, "image/jpeg") == FittedImage(
        base64.b64encode(data).decode(), "image/jpeg"
    )


@pytest.mark.slow  # encodes images at full size
def test_a_bmp_is_converted_to_png_with_pi_s_hint() -> None:
    small = _fitted(_flat(30, 20, "BMP"), "image/bmp")
    assert (small.mime_type, small.hints) == (
        "image/png",
        ("[Image converted from image/bmp to image/png.]",),
    )
    assert _size_and_format(small) == ((30, 20), "PNG")
    large = _fitted(_flat(2500, 3000, "BMP"), "image/bmp")
    assert large.hints == (
        "[Image converted from image/bmp to image/png.]",
        _note((2500, 3000), (1667, 2000), "1.50"),
    )


@pytest.mark.parametrize(
    ("data", "mime_type", "message"),
    [
        (solid_png(50, 50, (1, 1, 1))[:60], "image/png", NOT_RESIZED),
        (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + b"\0" * 20, "image/png", NOT_RESIZED),
        (_flat(30, 20, "BMP")[:40], "image/bmp", NOT_CONVERTED),
        (b"not an image at all", "image/tiff", NOT_CONVERTED),
    ],
    ids=["truncated-png", "empty-header", "truncated-bmp", "garbage"],
)
def test_bytes_that_do_not_decode_get_pi_s_omitted_message(
    data: bytes, mime_type: str, message: str
) -> None:
    assert fit_image(data, mime_type) == OmittedImage(message)


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
@pytest.mark.parametrize("side", [10_000, 30_000], ids=["above-the-limit", "far-above"])
def test_a_decompression_bomb_is_omitted_without_being_decoded(side: int) -> None:
    started = time.monotonic()
    assert fit_image(_header_only_png(side, side), "image/png") == OmittedImage(NOT_RESIZED)
    assert convert_to_png(_header_only_png(side, side)) is None
    assert time.monotonic() - started < 2


def test_an_image_of_more_pixels_than_the_limit_is_not_decoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(image_fit, "MAX_PIXELS", 399)
    assert fit_image(_flat(20, 20), "image/png") == OmittedImage(NOT_RESIZED)
    assert fit_image(_flat(20, 20, "BMP"), "image/bmp") == OmittedImage(NOT_CONVERTED)
    monkeypatch.setattr(image_fit, "MAX_PIXELS", 400)
    assert isinstance(fit_image(_flat(20, 20, "BMP"), "image/bmp"), FittedImage)


def test_with_auto_resize_off_images_are_only_converted() -> None:
    huge = _flat(3000, 1200)
    assert fit_image(huge, "image/png", auto_resize=False) == FittedImage(
        base64.b64encode(huge).decode(), "image/png"
    )
    # Not decoded at all: bytes Pillow cannot read still go, as in Pi.
    broken = huge[:100]
    assert _fitted(broken, "image/png", auto_resize=False).data == base64.b64encode(broken).decode()
    converted = _fitted(_flat(2500, 3000, "BMP"), "image/bmp", auto_resize=False)
    assert converted.hints == ("[Image converted from image/bmp to image/png.]",)
    assert _size_and_format(converted) == ((2500, 3000), "PNG")


def test_a_tool_s_large_image_is_fitted_and_its_hints_follow_it() -> None:
    large = base64.b64encode(_flat(3000, 1200)).decode()
    small = base64.b64encode(solid_png(2, 2, (0, 0, 0))).decode()
    content = [
        TextContent(text="shot"),
        ImageContent(data=large, mime_type="image/png"),
        ImageContent(data=small, mime_type="image/png"),
    ]
    fitted = fit_result_images(content, auto_resize=True)
    assert fitted is not None
    text, image, hints, kept = fitted
    assert text == content[0]
    assert kept is content[2]
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert Image.open(io.BytesIO(base64.b64decode(image.data))).size == (2000, 800)
    assert hints == TextContent(text=_note((3000, 1200), (2000, 800), "1.50"))


def test_a_tool_s_image_that_fits_or_cannot_be_fitted_is_left_as_it_is() -> None:
    small = ImageContent(
        data=base64.b64encode(solid_png(2, 2, (0, 0, 0))).decode(), mime_type="image/png"
    )
    broken = ImageContent(data=base64.b64encode(b"\x89PNG broken").decode(), mime_type="image/png")
    assert fit_result_images([small, broken], auto_resize=True) is None
    assert fit_result_images([TextContent(text="no image")], auto_resize=True) is None
