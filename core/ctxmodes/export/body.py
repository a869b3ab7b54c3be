"""The two long parts of the export page, the sidebar's tree and the main column's entries,
as streams of HTML chunks: the page template writes each chunk as it comes, so the page
is never held whole.

Every session value is escaped by :func:`~ctxmodes.export.entries.html_text`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Final

from markupsafe import Markup

from ctxmodes.export.entries import MISSING, entry_body, html_text, markdown_block
from ctxmodes.export.view import Archive, EntryView, SessionView, Token

__all__ = ["main_column", "sidebar"]

#: Pieces of HTML joined into one chunk of the stream.
CHUNK_PIECES: Final = 512


def sidebar(view: SessionView) -> Iterator[Markup]:
    """The items of the sidebar's list: the whole tree, each fork's branches folded."""
    return _chunks(_sidebar_items(view.sidebar()))


def main_column(view: SessionView) -> Iterator[Markup]:
    """The entries of the active path, each side branch folded where it leaves the path and
    each archived window under the summary that stands for it."""
    return _chunks(_Main(view).pieces())


def _chunks(pieces: Iterable[str]) -> Iterator[Markup]:
    stream = iter(pieces)
    while batch := list(itertools.islice(stream, CHUNK_PIECES)):
        yield Markup("".join(batch))


# ----------------------------------------------------------------------------- sidebar


def _sidebar_items(tokens: Iterable[Token]) -> Iterator[str]:
    for token in tokens:
        if token.kind == "entry":
            assert token.entry is not None
            yield _sidebar_line(token.entry)
        elif token.kind == "open":
            assert token.entry is not None
            archive = token.archive
            archived = " archived" if archive else ""
            opened = " open" if token.active or not archive else ""
            heading = _archive_state(archive) if archive else html_text(token.entry.title)
            yield f'<li class="fork{archived}"><details{opened}><summary>{heading}</summary><ul>'
        else:
            yield "</ul></details></li>"


def _sidebar_line(entry: EntryView) -> str:
    mark = "●" if entry.active else ""
    return (
        f'<li class="{_classes(entry)}">\n<a href="#e-{html_text(entry.id)}">'
        f'<span class="mark">{mark}</span><span class="t">{html_text(entry.title)}</span>'
        f'{_label(entry)} <span class="p">{html_text(entry.preview)}</span></a></li>'
    )


def _classes(entry: EntryView) -> str:
    active = " active" if entry.active else ""
    labeled = " labeled" if entry.label else ""
    # The kind is one of the view's own words, never a value from the session.
    return f"node k-{entry.kind}{active}{labeled}"


def _label(entry: EntryView) -> str:
    return f' <span class="label">[{html_text(entry.label)}]</span>' if entry.label else ""


def _window_name(archive: Archive) -> str:
    number = archive.window_number
    return "?" if number is None else html_text(number)


def _archive_state(archive: Archive) -> str:
    where = "on the active path" if archive.active else "hidden from the model"
    return f"archived window {_window_name(archive)} — {where}"


# ----------------------------------------------------------------------------- main column


class _Main:
    """The main column of one view."""

    def __init__(self, view: SessionView) -> None:
        self.view = view

    def pieces(self) -> Iterator[str]:
        view = self.view
        for entry_id in view.active_path:
            yield from self._article(view.entries[entry_id])
            for child in view.side_branches(entry_id):
                head = view.entries[child.entry_id]
                yield (
                    '<details class="branch"><summary>branch: '
                    f"{html_text(head.preview or head.title)}</summary>"
                )
                yield from self._walk(view.branch(child))
                yield "</details>"

    def _walk(self, tokens: Iterable[Token]) -> Iterator[str]:
        for token in tokens:
            if token.kind == "entry":
                assert token.entry is not None
                yield from self._article(token.entry)
            elif token.kind == "open":
                assert token.entry is not None
                archive = token.archive
                fold = "archived" if archive else "branch"
                opened = " open" if token.active else ""
                heading = _archive_state(archive) if archive else "branch"
                head = token.entry
                yield (
                    f'<details class="{fold}"{opened}><summary>{heading}: '
                    f"{html_text(head.preview or head.title)}</summary>"
                )
            else:
                yield "</details>"

    def _article(self, entry: EntryView) -> Iterable[str]:
        entry_id = html_text(entry.id)
        head = (
            f'<article id="e-{entry_id}" class="{_classes(entry)}">\n'
            f'<header><span class="t">{html_text(entry.title)}</span>{_label(entry)} '
            f'<span class="id">{entry_id}</span></header>'
        )
        if entry.type != "branch_summary":
            return (head + entry_body(entry) + "</article>",)
        return itertools.chain((head,), self._summary(entry), ("</article>",))

    def _summary(self, entry: EntryView) -> Iterator[str]:
        """A branch summary, and the archived window it stands for folded below it."""
        view = self.view
        archive = view.archive_of_summary.get(entry.id)
        if archive is not None:
            state = (
                "the window itself is on the active path again"
                if archive.active
                else "kept in the file, hidden from the model"
            )
            name = _window_name(archive)
            yield f'<p class="hidden-note">Summary of archived window {name} — {state}</p>'
        yield markdown_block(entry.stored.get("summary", MISSING))
        root = view.archive_root(archive) if archive is not None and not archive.active else None
        if archive is None or root is None:
            return
        yield (
            f'<details class="archived"><summary>archived window {_window_name(archive)} '
            "(hidden from the model)</summary>\n"
        )
        yield from self._walk(view.branch(root))
        yield "\n</details>"
