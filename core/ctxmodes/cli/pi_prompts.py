"""The prompts of a Pi-style command line: what is piped into standard input, each
``@FILE`` argument (an image attached, made to fit as Pi makes it) and the messages, put
together as Pi builds its first message.

Apart from :mod:`ctxmodes.cli.pi_command_line`, which every start reads, so that only a
command line that sends prompts pays for these imports.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ctxmodes.errors import CtxmodesError
from ctxmodes.session.regular_file import read_regular
from ctxmodes.tools._images import SNIFF_BYTES, image_mime_type

if TYPE_CHECKING:
    from ctxmodes.session.models import ImageContent


@dataclass(frozen=True, slots=True)
class PiPrompts:
    """The prompts a Pi-style command line sends, in order, and the images attached to the
    first one (as Pi attaches them: after its text, in the order of the ``@FILE``
    arguments)."""

    texts: tuple[str, ...]
    images: tuple[ImageContent, ...] = ()


@dataclass(frozen=True, slots=True)
class PiArguments:
    """A Pi-style command line's prompts as read, before its images are made to fit (which
    waits for the settings): standard input (trimmed), each ``@FILE``'s absolute path and
    content, and the messages."""

    piped: str
    files: tuple[tuple[Path, bytes], ...]
    messages: tuple[str, ...]

    @property
    def sends_nothing(self) -> bool:
        """No text on standard input, no ``@FILE`` with content, and no message."""
        return not (self.piped or self.messages or any(data for _, data in self.files))

    def prompts(self, *, auto_resize_images: bool = True) -> PiPrompts:
        """The prompts, as Pi builds them (see :func:`pi_prompts`); ``auto_resize_images``
        is Pi's ``images.autoResize``."""
        parts = [self.piped] if self.piped else []
        blocks: list[str] = []
        images: list[ImageContent] = []
        for path, data in self.files:
            block, image = _file_part(path, data, auto_resize_images)
            blocks.append(block)
            if image is not None:
                images.append(image)
        text = "".join(blocks)
        if text:
            parts.append(text)
        messages = list(self.messages)
        if messages:
            parts.append(messages.pop(0))
        first = ["".join(parts)] if parts else []
        return PiPrompts(tuple(first + messages), tuple(images))


def read_pi_arguments(arguments: Sequence[str], *, piped: str | None, base: Path) -> PiArguments:
    """The prompts of ``arguments`` as read (see :func:`pi_prompts`).

    :raises CtxmodesError: a file that does not exist or cannot be read.
    """
    files = [argument[1:] for argument in arguments if argument.startswith("@")]
    messages = tuple(argument for argument in arguments if not argument.startswith("@"))
    stripped = (piped or "").strip().strip("\ufeff")
    return PiArguments(stripped, tuple(_read_file(name, base) for name in files), messages)


def pi_prompts(
    arguments: Sequence[str], *, piped: str | None, base: Path, auto_resize_images: bool = True
) -> PiPrompts:
    """The prompts a Pi-style command line sends: ``@FILE`` arguments (relative to
    ``base``; ``~`` expanded) become ``<file name="...">`` blocks of the first prompt, after
    ``piped`` (standard input, trimmed; ``None`` or empty: none) and before the first
    message, as Pi builds its first message; a file of size 0 (empty, or a FIFO or a
    device, as Pi's ``stat`` tells them) adds nothing and is not read. An image file (by
    its content, as the ``read`` tool tells them) is made to fit what models take, as Pi
    makes it (:mod:`ctxmodes.tools.image_fit`; ``auto_resize_images`` is Pi's
    ``images.autoResize``), and attached to the first prompt, its block holding Pi's notes
    on what was done (a conversion, a resize), empty when nothing was; one that cannot be
    made to fit is not attached, and its block says so in Pi's words.

    :raises CtxmodesError: a file that does not exist or cannot be read.
    """
    read = read_pi_arguments(arguments, piped=piped, base=base)
    return read.prompts(auto_resize_images=auto_resize_images)


def _read_file(name: str, base: Path) -> tuple[Path, bytes]:
    """The file's content; nothing when its size is 0, which Pi passes over unread: an
    empty file, and also a FIFO or a device (``/dev/zero``), whose read could wait or run
    for ever."""
    path = (base / Path(name).expanduser()).resolve()
    try:
        if path.stat().st_size == 0:
            return path, b""
        return path, read_regular(path)
    except FileNotFoundError:
        raise CtxmodesError(f"file not found: {path}") from None
    except OSError as exc:
        raise CtxmodesError(f"could not read file {path}: {exc.strerror or exc}") from None


def _file_part(path: Path, data: bytes, auto_resize: bool) -> tuple[str, ImageContent | None]:
    """The block a file adds to the first prompt, and the image it attaches."""
    if not data:
        return "", None
    mime_type = image_mime_type(data[:SNIFF_BYTES])
    if mime_type is None:
        content = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
        return f'<file name="{path}">\n{content}\n</file>\n', None
    # Here, not above: these bring pydantic and Pillow, which a prompt of text does without.
    from ctxmodes.session.models import ImageContent
    from ctxmodes.tools.image_fit import OmittedImage, fit_image

    fitted = fit_image(data, mime_type, auto_resize=auto_resize)
    if isinstance(fitted, OmittedImage):
        return f'<file name="{path}">{fitted.message}</file>\n', None
    # Keys in the order Pi writes an attached image: mimeType, then data.
    image = ImageContent(mime_type=fitted.mime_type, data=fitted.data)
    hints = "\n".join(fitted.hints)
    return f'<file name="{path}">{hints}</file>\n', image


def piped_input() -> str | None:
    """What was piped into standard input (read to its end), or ``None`` on a terminal."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    return sys.stdin.buffer.read().decode("utf-8", errors="replace")
