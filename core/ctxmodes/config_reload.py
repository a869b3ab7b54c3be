"""Reading a running session's configuration again (the terminal's ``/reload``).

Pi's ``/reload`` reads its ``settings.json`` files again and its running session takes the
settings it reads at each use. ctxmodes reads again what it read at start-up, ctxmodes' own
files and Pi's, layered as then, with the same command-line values over them and the trust
decision of the run (:class:`ReloadableSettings`); what the running session takes is merged
field by field by :func:`kept_or_reloaded`, so that a value the user changed this run
(``/settings``, ``/thinking``, Ctrl+T) is kept: Pi saves such a choice to ``settings.json``
and reads it back, ctxmodes never writes the file and keeps the choice instead.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from pathlib import Path

    from ctxmodes.config import Settings
    from ctxmodes.host.runtime import AgentHost

T = TypeVar("T")


def kept_or_reloaded(current: T, before: T, after: T) -> T:
    """``after``, unless ``current`` was changed this run from ``before`` (what the old
    configuration set): then ``current``. Settings objects (compaction, retries …) and
    option records (the tool selection) are merged field by field, so a switch turned this
    run, or a tool flag of the command line, stays and the file's other values of the same
    table are taken."""
    if current == before:
        return after
    if type(current) is not type(before) or type(before) is not type(after):
        return current
    if isinstance(current, BaseModel):
        names: Iterable[str] = type(current).model_fields
    elif dataclasses.is_dataclass(current) and not isinstance(current, type):
        names = [field.name for field in dataclasses.fields(current)]
    else:
        return current
    changes: dict[str, Any] = {
        name: kept_or_reloaded(getattr(current, name), getattr(before, name), getattr(after, name))
        for name in names
    }
    if isinstance(current, BaseModel):
        merged: T = current.model_copy(update=changes)
        return merged
    return dataclasses.replace(current, **changes)  # type: ignore[type-var]


@dataclass(slots=True)
class ReloadableSettings:
    """A run's configuration and how to read it again as it was read at start-up.

    :ivar settings: the configuration the running session was made from, or last reloaded.
    :ivar read_in: reads every source again for a working directory (its project's files,
        the command-line values and the run's trust decisions); raises
        :class:`~ctxmodes.errors.ConfigError` for a file that is not valid, with the words
        of the error at start-up.
    :ivar cwd: the working directory ``settings`` were read for: the running session's,
        or the one before it when that session's project could not be read.
    """

    settings: Settings
    read_in: Callable[[Path], Settings]
    cwd: Path

    def read_again(self) -> Settings:
        """Every source read again for :attr:`cwd` (``/reload``).

        :raises ConfigError: a file that is not valid.
        """
        return self.read_in(self.cwd)

    def read_for(self, cwd: Path) -> Settings:
        """Every source read again for ``cwd``, where a session about to replace the running
        one will run (its directory, or another project's); :attr:`cwd` becomes ``cwd`` (a
        later ``/reload`` reads there), and the caller takes them, as settings read again,
        over :attr:`settings`.

        :raises ConfigError: a file there that is not valid (:attr:`cwd` moves all the same).
        """
        self.cwd = cwd.resolve()
        return self.read_in(self.cwd)

    def take(self, host: AgentHost, after: Settings) -> Settings:
        """Give ``after`` (read again, or another project's) to ``host`` as Pi's running
        session takes settings read again (:meth:`AgentHost.reload_settings`: values this
        run changed stand) and remember it as :attr:`settings`; returns the settings before
        it, for what else merges them (the terminal's own table)."""
        before, self.settings = self.settings, after
        host.reload_settings(before, after)
        return before
