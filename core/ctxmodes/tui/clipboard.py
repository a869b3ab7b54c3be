"""Pasting from the system clipboard as Pi does (Ctrl+V): an image is saved to a file in the
temporary directory and its path typed into the editor (the model opens it with ``read``,
which shows it images); otherwise the clipboard's text is typed in. An image of another
type than Pi's four (a BMP from WSLg) is converted to PNG first, as Pi converts it; one
that cannot be converted is no image.

The clipboard is read through the desktop's own tools — ``wl-paste`` on Wayland, ``xclip``
on X11 — each with a short timeout, so a missing tool or display costs a notice, never a
hang.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

#: Pi's image types, in the order it prefers them.
IMAGE_TYPES: Final = ("image/png", "image/jpeg", "image/webp", "image/gif")
_EXTENSIONS: Final = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/webp": "webp",
    "image/gif": "gif",
}
LIST_TIMEOUT_SECONDS: Final = 1.0
READ_TIMEOUT_SECONDS: Final = 3.0


def _run(command: Sequence[str], timeout: float) -> bytes | None:
    try:
        result = subprocess.run(
            list(command), capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None


def _base_type(kind: str) -> str:
    """A MIME type without its parameters (``image/png;charset=…`` → ``image/png``)."""
    return kind.split(";")[0].strip().lower()


def _preferred(offered: list[str]) -> str | None:
    """The first of Pi's image types offered, else the first other image type."""
    bases = {_base_type(kind): kind for kind in offered}
    for kind in IMAGE_TYPES:
        if kind in bases:
            return bases[kind]
    return next((kind for kind in offered if _base_type(kind).startswith("image/")), None)


def _supported(data: bytes, kind: str) -> tuple[bytes, str] | None:
    """The image as one of Pi's types: as it is, or converted to PNG (``None``: it cannot
    be), without turning it by its EXIF orientation, as Pi's clipboard does not."""
    if kind in IMAGE_TYPES:
        return data, kind
    from ctxmodes.tools.image_fit import convert_to_png

    png = convert_to_png(data, orient=False)
    return None if png is None else (png, "image/png")


def _wayland(environ: Mapping[str, str]) -> bool:
    return bool(environ.get("WAYLAND_DISPLAY")) or environ.get("XDG_SESSION_TYPE") == "wayland"


def read_image(environ: Mapping[str, str] | None = None) -> tuple[bytes, str] | None:
    """The clipboard's image as (bytes, MIME type), or ``None``."""
    env = os.environ if environ is None else environ
    if _wayland(env):
        listed = _run(["wl-paste", "--list-types"], LIST_TIMEOUT_SECONDS)
        kind = _preferred(listed.decode("utf-8", "replace").split()) if listed else None
        if kind is not None:
            data = _run(["wl-paste", "--type", kind, "--no-newline"], READ_TIMEOUT_SECONDS)
            if data:
                return _supported(data, _base_type(kind))
    if env.get("DISPLAY"):
        targets = _run(
            ["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"], LIST_TIMEOUT_SECONDS
        )
        kind = _preferred(targets.decode("utf-8", "replace").split()) if targets else None
        if kind is not None:
            data = _run(
                ["xclip", "-selection", "clipboard", "-t", kind, "-o"], READ_TIMEOUT_SECONDS
            )
            if data:
                return _supported(data, _base_type(kind))
    return None


def read_text(environ: Mapping[str, str] | None = None) -> str | None:
    """The clipboard's text, or ``None``."""
    env = os.environ if environ is None else environ
    commands: list[list[str]] = []
    if _wayland(env):
        commands.append(["wl-paste", "--no-newline", "--type", "text"])
    if env.get("DISPLAY"):
        commands.append(["xclip", "-selection", "clipboard", "-o"])
    for command in commands:
        data = _run(command, READ_TIMEOUT_SECONDS)
        if data:
            return data.decode("utf-8", "replace")
    return None


def save_image(data: bytes, kind: str, directory: Path | None = None) -> Path:
    """``data`` in a new file of its own (never one that exists) in the temporary directory."""
    folder = Path(tempfile.gettempdir()) if directory is None else directory
    path = folder / f"ctxmodes-clipboard-{uuid.uuid4()}.{_EXTENSIONS.get(kind, 'png')}"
    with path.open("xb") as file:
        file.write(data)
    return path


def clipboard_paste(environ: Mapping[str, str] | None = None) -> str | None:
    """What Ctrl+V types into the editor: a saved image's path, the clipboard's text, or
    ``None`` when the clipboard is empty or cannot be read."""
    image = read_image(environ)
    if image is not None:
        return str(save_image(*image))
    return read_text(environ)
