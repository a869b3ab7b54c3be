"""Finding the plugins' entry points without :mod:`importlib.metadata`.

Every ``ctxmodes --help`` and ``ctxmodes modes`` looks up one entry-point group. Importing
:mod:`importlib.metadata` (email, zipfile, csv, pathlib) and letting it build a distribution
object for every installed package costs about six bare interpreter starts, more than the
whole start-up budget of those commands. The entry points live in plain files, so this
module reads them itself, following the standard library's rules (see
:func:`find_entry_points`); wherever those files may live elsewhere than in folders on
``sys.path`` (a zip archive or an ``.egg`` on the path, a custom finder in
``sys.meta_path`` that provides distributions), it asks :mod:`importlib.metadata` instead.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

#: What an entry point's value may be: ``module``, ``module:attribute.path``, then extras.
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
_METADATA_SUFFIXES = (".dist-info", ".egg-info")


class FoundEntryPoint(NamedTuple):
    """One entry point of a group: its name and value, and the metadata folder of the
    distribution that declares it (``None`` when :mod:`importlib.metadata` found it)."""

    name: str
    value: str
    metadata_dir: str | None = None
    #: The standard library's own entry point, when it found this one.
    found_by_importlib: EntryPoint | None = None

    @property
    def distribution(self) -> str | None:
        """The declaring distribution's name, as its metadata spells it."""
        if self.found_by_importlib is not None:
            dist = self.found_by_importlib.dist
            return None if dist is None else dist.metadata["Name"]
        return _metadata_name(self.metadata_dir) if self.metadata_dir else None

    def load(self) -> Any:
        """Import the module and resolve the attribute path, as ``EntryPoint.load`` does."""
        if self.found_by_importlib is not None:
            return self.found_by_importlib.load()
        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"malformed entry point value {self.value!r}")
        target: Any = importlib.import_module(match["module"])
        for attribute in filter(None, (match["attr"] or "").split(".")):
            target = getattr(target, attribute)
        return target


def find_entry_points(group: str, path: Sequence[str] | None = None) -> list[FoundEntryPoint]:
    """The entry points of ``group`` of every distribution on ``path`` (``sys.path``), as
    ``importlib.metadata.entry_points(group=group)`` lists them: distributions in path
    order, one per normalised name (the first found), each one's entry points in file
    order."""
    entries = list(sys.path if path is None else path)
    if not _only_plain_folders(entries):
        from importlib.metadata import entry_points

        return [
            FoundEntryPoint(ep.name, ep.value, found_by_importlib=ep)
            for ep in entry_points(group=group)
        ]
    found: list[FoundEntryPoint] = []
    seen: set[str] = set()
    for metadata_dir, normalized in _metadata_dirs(entries):
        if normalized in seen:
            continue
        seen.add(normalized)
        text = _read_text(os.path.join(metadata_dir, "entry_points.txt"))
        if text is not None:
            found += (
                FoundEntryPoint(name, value, metadata_dir)
                for name, value in _group_pairs(text, group)
            )
    return found


def _only_plain_folders(entries: Sequence[str]) -> bool:
    """Whether every distribution is a metadata folder in a folder of ``entries``: no
    finder but the standard one provides distributions, and no entry is an archive."""
    for finder in sys.meta_path:
        if hasattr(finder, "find_distributions") and not _is_standard_path_finder(finder):
            return False
    return not any(
        entry.lower().endswith(".egg") or os.path.isfile(entry or ".") for entry in entries
    )


def _is_standard_path_finder(finder: object) -> bool:
    from importlib.machinery import PathFinder

    return finder is PathFinder


def _metadata_dirs(entries: Sequence[str]) -> Iterator[tuple[str, str]]:
    """``(folder, normalised distribution name)`` of each ``*.dist-info`` and ``*.egg-info``
    in each of ``entries``, in the order the standard library visits them."""
    for entry in entries:
        try:
            children = os.listdir(entry or ".")
        except OSError:
            continue
        # Grouped by name within a folder, in listing order, as importlib's Lookup does.
        by_name: dict[str, list[str]] = {}
        for child in children:
            low = child.lower()
            if low.endswith(_METADATA_SUFFIXES):
                name = _normalize(low.rpartition(".")[0].partition("-")[0])
                by_name.setdefault(name, []).append(os.path.join(entry, child))
        for name, folders in by_name.items():
            for folder in folders:
                yield folder, name


def _normalize(name: str) -> str:
    """PEP 503 normalisation with underscores, as ``importlib.metadata.Prepared`` does."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _group_pairs(text: str, group: str) -> Iterator[tuple[str, str]]:
    """``(name, value)`` of each entry in section ``[group]`` of an ``entry_points.txt``."""
    section = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
        elif section == group:
            name, sep, value = line.partition("=")
            if sep:
                yield name.strip(), value.strip()


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _metadata_name(metadata_dir: str) -> str | None:
    """The ``Name`` header of a distribution's core metadata (``METADATA`` or ``PKG-INFO``)."""
    for file_name in ("METADATA", "PKG-INFO"):
        text = _read_text(os.path.join(metadata_dir, file_name))
        if text is None:
            continue
        for line in text.splitlines():
            if not line:
                break  # the headers end at the first empty line
            key, sep, value = line.partition(":")
            if sep and key.strip().lower() == "name":
                return value.strip()
        return None
    return None
