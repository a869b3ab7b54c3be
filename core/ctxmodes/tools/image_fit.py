"""Making an image fit what providers take, as Pi 0.85's ``processImage`` does.

An image of a type models do not take (BMP) is converted to PNG. With resizing on (Pi's
``images.autoResize``, the default) an image is decoded and turned upright by its EXIF
orientation; one within 2000x2000 pixels and 4.5 MiB of base64 goes as it is, byte for
byte; a larger one is scaled (Lanczos) to fit those sides, then encoded as PNG, else as JPEG
at qualities 80, 85, 70, 55 and 40 in that order, the first under the byte limit winning;
when none is, both sides shrink by a quarter and the encodings are tried again, down to one
pixel. The hints tell the model what was done, in Pi's words. With resizing off, images are
only converted, never decoded or checked.

The pixels are Pillow's, so the encoded bytes differ from Pi's (its encoders are Photon's);
which images stay as they are, the sizes, the types and every text are Pi's.

Pillow is imported on the first image, not with this module: every command start imports
the tools.
"""

from __future__ import annotations

import base64
import functools
import io
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ctxmodes.session.jsvalues import js_round, js_to_fixed

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = [
    "NOT_CONVERTED",
    "NOT_RESIZED",
    "FittedImage",
    "OmittedImage",
    "convert_to_png",
    "fit_image",
    "fit_result_images",
]

MAX_WIDTH: Final = 2000
MAX_HEIGHT: Final = 2000
#: Pi's limit on an image's base64 text: 4.5 MiB, headroom below Anthropic's 5 MB.
MAX_BASE64_BYTES: Final = int(4.5 * 1024 * 1024)
#: The JPEG qualities tried after PNG, in Pi's order.
JPEG_QUALITIES: Final = (80, 85, 70, 55, 40)
#: Images with more pixels than this are not decoded (a decompression bomb would take the
#: machine's memory): Pillow's default threshold, about 9,500 pixels square, made a refusal.
MAX_PIXELS: Final = 89_478_485
#: The types models take as they are, by the spellings Pi accepts.
_INLINE_TYPES: Final = {
    "image/png": "image/png",
    "image/jpeg": "image/jpeg",
    "image/jpg": "image/jpeg",
    "image/gif": "image/gif",
    "image/webp": "image/webp",
}
#: Pi's texts for an image it leaves out.
NOT_CONVERTED: Final = "[Image omitted: could not be converted to a supported inline image format.]"
NOT_RESIZED: Final = "[Image omitted: could not be resized below the inline image size limit.]"


@dataclass(frozen=True, slots=True)
class FittedImage:
    """An image ready to attach: its base64 text, its type, and Pi's notes on what was done
    to it (a conversion, a resize), one line each."""

    data: str
    mime_type: str
    hints: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class OmittedImage:
    """An image that cannot be attached, and Pi's text saying so."""

    message: str


class _TooManyPixels(Exception):
    """The image has more pixels than :data:`MAX_PIXELS`."""


def fit_image(
    data: bytes, mime_type: str, *, auto_resize: bool = True
) -> FittedImage | OmittedImage:
    """``data`` (of type ``mime_type``) made to fit, as Pi's ``processImage`` (see the module
    docstring). Bytes that do not decode, or decode to too many pixels, are omitted with
    Pi's text."""
    base_type = _base_type(mime_type)
    inline_type = _INLINE_TYPES.get(base_type)
    converted_from = None
    if inline_type is None:
        png = convert_to_png(data)
        if png is None:
            return OmittedImage(NOT_CONVERTED)
        data, inline_type, converted_from = png, "image/png", base_type
    if not auto_resize:
        return FittedImage(_base64(data), inline_type, _converted(converted_from, inline_type))
    try:
        fitted = _fit(data, inline_type)
    except Exception:  # Pillow's decoders raise many kinds; Pi omits the image on any
        return OmittedImage(NOT_RESIZED)
    if fitted is None:
        return OmittedImage(NOT_RESIZED)
    return FittedImage(
        fitted.data, fitted.mime_type, _converted(converted_from, fitted.mime_type) + fitted.hints
    )


def convert_to_png(data: bytes, *, orient: bool = True) -> bytes | None:
    """``data`` as a PNG (turned upright by its EXIF orientation unless ``orient`` is false,
    as Pi's clipboard does not), or ``None`` when it cannot be decoded."""
    try:
        return _png(_decoded(data, orient=orient))
    except Exception:  # Pillow's decoders raise many kinds; Pi gives up on any
        return None


def fit_result_images(content: Sequence[Any], *, auto_resize: bool) -> list[Any] | None:
    """A tool result's blocks with every image made to fit and its hints in a text block
    after it, as Pi treats what any tool returns; ``None`` when nothing changed. An image
    that cannot be made to fit stays as the tool gave it, as in Pi."""
    from ctxmodes.session.models import ImageContent, TextContent

    if not any(isinstance(block, ImageContent) for block in content):
        return None
    blocks: list[Any] = []
    changed = False
    for block in content:
        if not isinstance(block, ImageContent):
            blocks.append(block)
            continue
        fitted = fit_image(_decode_base64(block.data), block.mime_type, auto_resize=auto_resize)
        if isinstance(fitted, OmittedImage) or (
            fitted.data == block.data and fitted.mime_type == block.mime_type and not fitted.hints
        ):
            blocks.append(block)
            continue
        blocks.append(ImageContent(data=fitted.data, mime_type=fitted.mime_type))
        if fitted.hints:
            blocks.append(TextContent(text="\n".join(fitted.hints)))
        changed = True
    return blocks if changed else None


def _fit(data: bytes, mime_type: str) -> FittedImage | None:
    image = _decoded(data, orient=True)
    width, height = image.size
    if width <= MAX_WIDTH and height <= MAX_HEIGHT and _base64_size(len(data)) < MAX_BASE64_BYTES:
        return FittedImage(_base64(data), mime_type)
    target_width, target_height = width, height
    if target_width > MAX_WIDTH:
        target_height = js_round(target_height * MAX_WIDTH / target_width)
        target_width = MAX_WIDTH
    if target_height > MAX_HEIGHT:
        target_width = js_round(target_width * MAX_HEIGHT / target_height)
        target_height = MAX_HEIGHT
    while True:
        candidate = _first_small_enough(image, target_width, target_height)
        if candidate is not None:
            note = _dimension_note(width, height, target_width, target_height)
            return FittedImage(candidate[0], candidate[1], (note,))
        if target_width == 1 and target_height == 1:
            return None
        target_width = 1 if target_width == 1 else max(1, math.floor(target_width * 0.75))
        target_height = 1 if target_height == 1 else max(1, math.floor(target_height * 0.75))


def _first_small_enough(image: Image, width: int, height: int) -> tuple[str, str] | None:
    """The first of Pi's encodings of ``image`` at ``width`` x ``height`` whose base64 is
    under the limit, as (base64, MIME type)."""
    from PIL import Image as PILImage

    resized = image.resize((width, height), PILImage.Resampling.LANCZOS)
    encoded = _png(resized)
    if _base64_size(len(encoded)) < MAX_BASE64_BYTES:
        return _base64(encoded), "image/png"
    opaque = resized.convert("RGB")
    for quality in JPEG_QUALITIES:
        buffer = io.BytesIO()
        opaque.save(buffer, format="JPEG", quality=quality)
        if _base64_size(buffer.tell()) < MAX_BASE64_BYTES:
            return _base64(buffer.getvalue()), "image/jpeg"
    return None


def _decoded(data: bytes, *, orient: bool) -> Image:
    """The image's first frame as RGBA (Photon's pixels), upright when ``orient``."""
    from PIL import Image as PILImage

    _refuse_bombs()
    with PILImage.open(io.BytesIO(data)) as opened:
        # Checked here too: a test runner may have reset the filter _refuse_bombs set.
        if opened.width * opened.height > MAX_PIXELS:
            raise _TooManyPixels(opened.size)
        opened.load()
        orientation = _orientation(opened) if orient and _may_be_turned(data) else 1
        image = opened.convert("RGBA")
    # Pi's turns for orientations 2 to 8 (flips, and rotations by a quarter).
    transposes = {
        2: PILImage.Transpose.FLIP_LEFT_RIGHT,
        3: PILImage.Transpose.ROTATE_180,
        4: PILImage.Transpose.FLIP_TOP_BOTTOM,
        5: PILImage.Transpose.TRANSPOSE,
        6: PILImage.Transpose.ROTATE_270,
        7: PILImage.Transpose.TRANSVERSE,
        8: PILImage.Transpose.ROTATE_90,
    }
    transpose = transposes.get(orientation)
    return image if transpose is None else image.transpose(transpose)


@functools.cache
def _refuse_bombs() -> None:
    """Pillow set to refuse more than :data:`MAX_PIXELS` pixels when it opens an image:
    by itself it only warns between that and twice as many, and decodes them."""
    from PIL import Image as PILImage

    PILImage.MAX_IMAGE_PIXELS = MAX_PIXELS
    warnings.filterwarnings("error", category=PILImage.DecompressionBombWarning)


def _may_be_turned(data: bytes) -> bool:
    """Whether Pi reads the file's EXIF orientation: a JPEG's (a phone's MPO too, which
    Pillow names otherwise) or a WebP's, by their first bytes as Pi tells them."""
    return data[:2] == b"\xff\xd8" or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")


def _orientation(image: Image) -> int:
    value = image.getexif().get(0x0112, 1)
    return value if isinstance(value, int) and 1 <= value <= 8 else 1


def _png(image: Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _dimension_note(width: int, height: int, shown_width: int, shown_height: int) -> str:
    scale = js_to_fixed(width / shown_width, 2)
    return (
        f"[Image: original {width}x{height}, displayed at {shown_width}x{shown_height}. "
        f"Multiply coordinates by {scale} to map to original image.]"
    )


def _converted(from_type: str | None, to_type: str) -> tuple[str, ...]:
    if not from_type or from_type == to_type:
        return ()
    return (f"[Image converted from {from_type} to {to_type}.]",)


def _base_type(mime_type: str) -> str:
    return mime_type.split(";")[0].strip().lower()


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _base64_size(size: int) -> int:
    return -(-size // 3) * 4


def _decode_base64(text: str) -> bytes:
    # Node's decoder skips what is not base64 instead of failing.
    return base64.b64decode(text + "===", validate=False)
