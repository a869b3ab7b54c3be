"""Credential files in Pi's ``auth.json`` format, changed only under the lock Pi takes.

Pi keeps one JSON object per provider id in ``auth.json`` and changes it under
``proper-lockfile``'s lock: a sibling directory ``auth.json.lock`` made with ``mkdir`` (atomic),
whose modification time is refreshed while it is held and which counts as abandoned once it
is 30 seconds old. :func:`pi_lock` takes exactly that lock, so Pi and ctxmodes never change
the file at the same time; no locking library speaks that protocol (``filelock`` uses
``flock`` on a file Pi does not look at). Changes re-read the file under the lock, write a
temporary file and rename it over the old one (readers never see half a file), keep the
owner-only mode, and never replace a file that could not be parsed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from ctxmodes import file_lock
from ctxmodes.file_replace import replacing
from ctxmodes.providers.credentials import CredentialError

#: How long to wait for another process to finish with the file.
LOCK_TIMEOUT_S = 30.0

Credential = dict[str, Any]
Change = Callable[[Credential | None], Credential | None]


class CredentialStore(Protocol):
    """Where credentials live; :meth:`modify` is atomic with respect to other processes."""

    def read(self, provider: str) -> Credential | None: ...

    def modify(self, provider: str, change: Change) -> Credential | None:
        """Apply ``change`` to the current entry (re-read under the lock). ``change``
        returns the new entry, or ``None`` to leave the file untouched; the entry after
        the change is returned."""
        ...


class MemoryCredentialStore:
    """A store in memory (tests, and one process's own use)."""

    def __init__(self, entries: dict[str, Credential] | None = None) -> None:
        self._entries = dict(entries or {})
        self._lock = threading.Lock()

    def read(self, provider: str) -> Credential | None:
        with self._lock:
            return self._entries.get(provider)

    def modify(self, provider: str, change: Change) -> Credential | None:
        with self._lock:
            updated = change(self._entries.get(provider))
            if updated is not None:
                self._entries[provider] = updated
            return self._entries.get(provider)

    def snapshot(self) -> dict[str, Credential]:
        with self._lock:
            return dict(self._entries)


def pi_lock(path: Path, *, timeout_s: float = LOCK_TIMEOUT_S) -> AbstractContextManager[None]:
    """Hold ``<path>.lock`` as proper-lockfile does (see the module docstring).

    :raises CredentialError: another process holds the lock for longer than ``timeout_s``.
    """
    return file_lock.pi_lock(path, timeout_s=timeout_s, busy=CredentialError)


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as error:
        raise CredentialError(
            f"{path} is not valid JSON (line {error.lineno}); fix or remove it"
        ) from None
    if not isinstance(data, dict):
        raise CredentialError(f"{path} does not hold a JSON object; fix or remove it")
    return data


def write_owner_only(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically, readable by the owner only."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with replacing(path, mode=0o600, durable=True) as file:
        file.write(text)


class FileCredentialStore:
    """A credential file in Pi's ``auth.json`` format (Pi's own, or ctxmodes' own)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, Any]:
        try:
            text = self.path.read_text("utf-8")
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise CredentialError(f"cannot read {self.path}: {error.strerror or error}") from None
        return _parse(self.path, text.removeprefix("\ufeff"))

    def read(self, provider: str) -> Credential | None:
        entry = self._load().get(provider)
        return entry if isinstance(entry, dict) else None

    def modify(self, provider: str, change: Change) -> Credential | None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with pi_lock(self.path):
            data = self._load()
            current = data.get(provider)
            updated = change(current if isinstance(current, dict) else None)
            if updated is None:
                return current if isinstance(current, dict) else None
            data[provider] = updated
            write_owner_only(self.path, json.dumps(data, indent=2, ensure_ascii=False))
            return updated

    def remove(self, provider: str) -> bool:
        """Delete ``provider``'s entry; False when there was none."""
        if not self.path.exists():
            return False
        with pi_lock(self.path):
            data = self._load()
            if provider not in data:
                return False
            del data[provider]
            write_owner_only(self.path, json.dumps(data, indent=2, ensure_ascii=False))
            return True
