"""``/share``: the session's HTML page as a secret GitHub gist, made as Pi 0.85's ``/share``
makes one: ``gh auth status`` first, then the page written to a new temporary folder as
``session.html``, then ``gh gist create --public=false`` on that file, then the gist's URL.
A line takes the editor's place while this runs, and Esc (or Ctrl+C) cancels it: the ``gh``
running is stopped and nothing more is said than Pi's "Share cancelled". The folder is
removed however the share ends, also when ctxmodes exits meanwhile.

Two choices differ from Pi, each on purpose:

- Pi first uploads to Radius when a provider named ``radius`` is logged in. ctxmodes has no
  such provider, so it always makes a gist.
- Pi prints a viewer URL (``https://pi.dev/session/#<gist id>`` unless
  ``PI_SHARE_VIEWER_URL`` says another) above the gist's. Pi's viewer renders Pi's own page
  (the session data embedded in it), and refuses a page without it, as ctxmodes' page is:
  so the viewer URL is printed only when ``PI_SHARE_VIEWER_URL`` names a viewer.

Everything shown comes from ``gh``'s exit status, its standard output (the URL) and, for a
failure, its standard error; ``gh auth status``'s output, which names the account, is never
shown.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ctxmodes.errors import CtxmodesError
from ctxmodes.tui.key_hints import CANCEL, key_hint
from ctxmodes.tui.picker import Picker, PickerItem

if TYPE_CHECKING:
    from ctxmodes.hostapi import NotifyLevel
    from ctxmodes.tui.app import TerminalSession

# Pi's words, for each way a share ends.
NOT_INSTALLED: Final = "GitHub CLI (gh) is not installed. Install it from https://cli.github.com/"
NOT_LOGGED_IN: Final = "GitHub CLI is not logged in. Run 'gh auth login' first."
IN_MEMORY: Final = "Cannot export in-memory session to HTML"
NOTHING_YET: Final = "Nothing to export yet - start a conversation first"
NO_GIST_ID: Final = "Failed to parse gist ID from gh output"
CANCELLED: Final = "Share cancelled"
CREATING: Final = "Creating gist..."

#: Pi's variable for the base of a viewer URL (the gist's id follows a ``#``).
VIEWER_VARIABLE: Final = "PI_SHARE_VIEWER_URL"
#: The name the page has in the gist, as Pi names it.
PAGE_NAME: Final = "session.html"
#: How long a cancelled ``gh`` has to stop before it is killed.
STOP_GRACE: Final = 5.0


def viewer_url(gist_id: str, environ: Mapping[str, str]) -> str | None:
    """The viewer URL of ``gist_id`` as Pi builds it, when ``PI_SHARE_VIEWER_URL`` is set
    (an empty value counts as unset, as in Pi); ``None`` otherwise (see the module)."""
    base = environ.get(VIEWER_VARIABLE)
    return f"{base}#{gist_id}" if base else None


def share_report(gh_output: str, environ: Mapping[str, str]) -> str | None:
    """The lines printed after a gist was made, from ``gh gist create``'s standard output:
    ``Share URL: ...`` (only with a viewer) and ``Gist: ...``; ``None`` when the output
    names no gist id (the last part of its URL, as Pi takes it)."""
    gist_url = gh_output.strip()
    gist_id = gist_url.split("/")[-1]
    if not gist_id:
        return None
    viewer = viewer_url(gist_id, environ)
    shared = [f"Share URL: {viewer}"] if viewer else []
    return "\n".join([*shared, f"Gist: {gist_url}"])


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a share ends with: a line for the transcript, at ``level``."""

    message: str
    level: NotifyLevel = "info"

    @staticmethod
    def error(message: str) -> Outcome:
        # Pi shows every failure of /share as an error line (``Error: …``).
        return Outcome(message, "error")


class GistShare:
    """One ``/share``: its temporary folder, the ``gh`` it runs, and whether it was
    cancelled. :meth:`run` does the work on a thread of its own; :meth:`cancel` may come
    from any thread."""

    def __init__(self, source: Path | None, mode: str, environ: Mapping[str, str]) -> None:
        self.source = source
        self.mode = mode
        self.environ = environ
        self.folder = Path(tempfile.mkdtemp(prefix="ctxmodes-share-"))
        self.cancelled = threading.Event()
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None

    @property
    def page(self) -> Path:
        return self.folder / PAGE_NAME

    def run(self) -> Outcome | None:
        """Share the session; the outcome to show, or ``None`` once cancelled (the cancel
        said so already). The folder is gone when this returns."""
        atexit.register(self.abandon)
        try:
            outcome = self._share()
        finally:
            self._remove_folder()
            atexit.unregister(self.abandon)
        return None if self.cancelled.is_set() else outcome

    def cancel(self) -> None:
        """Stop the ``gh`` that runs (killed when it has not stopped after
        :data:`STOP_GRACE` seconds); no step starts after this."""
        self.cancelled.set()
        with self._lock:
            process = self._process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        timer = threading.Timer(STOP_GRACE, _kill_if_running, args=(process,))
        timer.daemon = True
        timer.start()

    def abandon(self) -> None:
        """ctxmodes exits while the share runs: stop ``gh`` now and remove the folder."""
        self.cancelled.set()
        with self._lock:
            process = self._process
        if process is not None:
            _kill_if_running(process)
        self._remove_folder()

    def _share(self) -> Outcome | None:
        try:
            auth = self._gh("auth", "status")
        except OSError:  # no gh on PATH, or not one that can run
            return Outcome.error(NOT_INSTALLED)
        if auth is None:
            return None
        if auth.returncode != 0:
            return Outcome.error(NOT_LOGGED_IN)
        try:
            self._export()
        except (OSError, CtxmodesError) as failure:
            return Outcome.error(f"Failed to export session: {failure}")
        try:
            created = self._gh("gist", "create", "--public=false", str(self.page))
        except OSError as failure:
            return Outcome.error(f"Failed to create gist: {failure}")
        if created is None:
            return None
        if created.returncode != 0:
            return Outcome.error(
                f"Failed to create gist: {created.stderr.strip() or 'Unknown error'}"
            )
        report = share_report(created.stdout, self.environ)
        return Outcome.error(NO_GIST_ID) if report is None else Outcome(report)

    def _export(self) -> None:
        from ctxmodes.export import export_session

        if self.source is None:
            raise CtxmodesError(IN_MEMORY)
        if not self.source.exists():
            raise CtxmodesError(NOTHING_YET)
        export_session(self.source, self.page, self.mode)

    def _gh(self, *arguments: str) -> subprocess.CompletedProcess[str] | None:
        """``gh ARGUMENTS`` to its end, its output captured; ``None`` when the share was
        cancelled before or while it ran."""
        with self._lock:
            if self.cancelled.is_set():
                return None
            process = subprocess.Popen(
                ["gh", *arguments],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
            )
            self._process = process
        stdout, stderr = process.communicate()
        with self._lock:
            self._process = None
        if self.cancelled.is_set():
            return None
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)

    def _remove_folder(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _kill_if_running(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()


def share(session: TerminalSession, args: str) -> None:
    """``/share``: see the module. Like Pi's, it takes no argument (any is ignored)."""
    agent = session.agent
    try:
        job = GistShare(agent.session_file, agent.mode, os.environ)
    except OSError as failure:  # no temporary folder could be made
        session.notify(f"Failed to export session: {failure}", "error")
        return
    finished = threading.Event()

    def cancelled() -> None:
        job.cancel()
        session.notify(CANCELLED)

    def keep_open(_item: PickerItem) -> None:
        # Enter closes a picker before it picks; the line stays until the share ends.
        if not finished.is_set() and not job.cancelled.is_set():
            session.open_picker(loader)

    loader = Picker(
        CREATING,
        lambda _query: [],
        keep_open,
        on_cancel=cancelled,
        hint=key_hint(session.keymap, CANCEL, "cancel"),
        free_text=True,
        filterable=False,
    )
    session.open_picker(loader)

    def work() -> None:
        outcome = job.run()

        def show() -> None:
            finished.set()
            if session.picker is loader:
                session.close_picker()
            if outcome is not None:
                session.notify(outcome.message, outcome.level)

        session.call_soon(show)

    threading.Thread(target=work, name="ctxmodes-share", daemon=True).start()
