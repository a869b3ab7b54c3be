"""Rendering a :class:`~ctxmodes.export.view.SessionView` with the page template."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

import orjson
from jinja2 import Environment, Template, Undefined
from markupsafe import Markup

from ctxmodes.errors import CtxmodesError
from ctxmodes.export.markdown import code_stylesheet, render_markdown
from ctxmodes.export.view import build_view, content_text, diff_lines, marker_number, one_line

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager

FILTERS: Final = ("default", "no-tools", "user-only", "labeled-only", "all")
_IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64: Final = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def _asset(name: str) -> str:
    return resources.files("ctxmodes.export").joinpath("templates", name).read_text("utf-8")


def _to_json(value: Any, pretty: bool = False) -> str:
    option = orjson.OPT_INDENT_2 if pretty else 0
    try:
        return orjson.dumps(value, option=option | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return str(value)


def _image_src(block: dict[str, Any]) -> str | None:
    """A ``data:`` URL for an image block, only for a known image type and valid base64."""
    mime, data = block.get("mimeType"), block.get("data")
    if mime not in _IMAGE_TYPES or not isinstance(data, str) or not _BASE64.fullmatch(data):
        return None
    try:
        base64.b64decode(data, validate=True)
    except binascii.Error:
        return None
    return f"data:{mime};base64,{data}"


@lru_cache(maxsize=1)
def _template() -> Template:
    # Session values of any shape reach the template: a missing key reads as empty.
    environment = Environment(autoescape=True, undefined=_Lenient)
    environment.globals.update(
        markdown=render_markdown,
        to_json=_to_json,
        one_line=one_line,
        content_text=content_text,
        marker_number=marker_number,
        image_src=_image_src,
        diff_lines=diff_lines,
    )
    return environment.from_string(_asset("session.html.j2"))


class _Lenient(Undefined):
    """Renders as nothing, is falsy, and yields nothing further."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self


def render_html(manager: SessionManager, file_name: str, mode: str | None = None) -> str:
    """The export page of the session ``manager`` holds; ``mode`` is the mode that manages
    it, in words, for the page's facts line.

    :raises CtxmodesError: the tree nests too deeply to render.
    """
    script = _asset("page.js")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    view = build_view(manager, file_name)
    view.mode = mode
    try:
        return _template().render(
            view=view,
            filters=FILTERS,
            # The page's own assets, not session content.
            stylesheet=Markup(_asset("page.css") + code_stylesheet()),
            script=Markup(script),
            script_hash=f"sha256-{digest}",
        )
    except RecursionError:
        raise CtxmodesError(f"{file_name}: the session tree nests too deeply to export") from None
