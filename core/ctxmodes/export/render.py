"""Rendering a :class:`~ctxmodes.export.view.SessionView` as the export page: the template
is the page's frame, :mod:`ctxmodes.export.body` its sidebar and main column."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterator
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from jinja2 import Environment, Template, Undefined
from markupsafe import Markup

from ctxmodes.collector import collector_paused
from ctxmodes.errors import CtxmodesError
from ctxmodes.export.body import main_column, sidebar
from ctxmodes.export.markdown import code_stylesheet
from ctxmodes.export.view import build_view
from ctxmodes.file_replace import replacing

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager

FILTERS: Final = ("default", "no-tools", "user-only", "labeled-only", "all")


def _asset(name: str) -> str:
    return resources.files("ctxmodes.export").joinpath("templates", name).read_text("utf-8")


@lru_cache(maxsize=1)
def _template() -> Template:
    # Session values of any shape reach the template: a missing key reads as empty.
    environment = Environment(autoescape=True, undefined=_Lenient)
    return environment.from_string(_asset("session.html.j2"))


class _Lenient(Undefined):
    """Renders as nothing, is falsy, and yields nothing further."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self


def write_html(
    manager: SessionManager,
    file_name: str,
    write: Callable[[str], object],
    mode: str | None = None,
) -> None:
    """Write the export page of the session ``manager`` holds through ``write``, a piece at
    a time; ``mode`` is the mode that manages it, in words, for the page's facts line.

    :raises CtxmodesError: the tree nests too deeply to render (part of the page may have
        been written).
    """
    # The view holds every entry decoded, and nothing of it makes a cycle: passes of the
    # cyclic collector over it would cost as much as building it.
    with collector_paused():
        try:
            for piece in _pieces(manager, file_name, mode):
                write(piece)
        except RecursionError:
            raise CtxmodesError(
                f"{file_name}: the session tree nests too deeply to export"
            ) from None


def write_page(
    manager: SessionManager, file_name: str, target: Path, mode: str | None = None
) -> None:
    """Write the export page to the file ``target``, replacing it whole: a page that cannot
    be rendered or written leaves ``target`` as it was.

    :raises CtxmodesError: the page cannot be rendered, or not written to ``target``.
    """
    try:
        with replacing(target) as out:
            write_html(manager, file_name, out.write, mode)
    except OSError as exc:
        raise CtxmodesError(f"cannot write {target}: {exc.strerror or exc}") from None


def default_page_name(source: Path) -> str:
    """Where Pi's ``/export`` and ``export_html`` write a session's page when told nothing:
    ``pi-session-<file name without .jsonl>.html``, in the working directory."""
    name = source.name.removesuffix(".jsonl") if source.name != ".jsonl" else source.name
    return f"pi-session-{name}.html"


def export_session(source: Path, target: Path, mode: str | None = None) -> None:
    """Write the export page of the session stored at ``source`` to ``target``, as the file
    holds it: the file is opened read-only, so a session being written meanwhile (the one
    running) is left alone.

    :raises CtxmodesError: ``target`` is the session file itself, or the page cannot be
        rendered or written.
    """
    from ctxmodes.session.manager import SessionManager

    if target.resolve() == source.resolve():
        raise CtxmodesError("Refusing to overwrite the session file")
    with SessionManager.open(source, read_only=True, preload=False) as manager:
        write_page(manager, source.name, target, mode)


def render_html(manager: SessionManager, file_name: str, mode: str | None = None) -> str:
    """The export page of :func:`write_html`, whole.

    :raises CtxmodesError: the tree nests too deeply to render.
    """
    pieces: list[str] = []
    write_html(manager, file_name, pieces.append, mode)
    return "".join(pieces)


def _pieces(manager: SessionManager, file_name: str, mode: str | None) -> Iterator[str]:
    script = _asset("page.js")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    view = build_view(manager, file_name)
    view.mode = mode
    return _template().generate(
        view=view,
        filters=FILTERS,
        sidebar=sidebar(view),
        main_column=main_column(view),
        # The page's own assets, not session content.
        stylesheet=Markup(_asset("page.css") + code_stylesheet()),
        script=Markup(script),
        script_hash=f"sha256-{digest}",
    )
