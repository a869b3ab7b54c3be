"""A ``gh`` executable for tests of ``/share``: GitHub is out of reach here, so this one keeps
the real GitHub CLI's contract for the two commands ``/share`` runs, and records each call.

``gh auth status``: exit 0 and the account on standard output (the token masked, as gh masks
it) when logged in; exit 1 and gh's sentence on standard error when not. ``gh gist create
[--public=false] FILE``: gh's progress lines on standard error, the gist's URL
(``https://gist.github.com/<user>/<32 hex>``) and a newline on standard output, exit 0; or,
told to fail, gh's failure lines on standard error and exit 1; or, told to hang, it waits
until it is stopped. Each call appends a line to ``calls.jsonl``: its arguments, and for a
gist the file's path and text as it was when gh read it.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Auth = Literal["logged-in", "logged-out"]
Gist = Literal["created", "fails", "hangs", "says-nothing"]

USER = "octocat"
#: What the real gh prints for ``auth status`` without a login.
LOGGED_OUT = "You are not logged into any GitHub hosts. To log in, run: gh auth login"
#: What the real gh prints on standard error when the gist API refuses the token.
GIST_FAILURE = (
    "- Creating gist session.html\n"
    "X Failed to create gist: HTTP 401: Bad credentials (https://api.github.com/gists)\n"
    "Try authenticating with:  gh auth login"
)
#: A token that must never reach the screen: gh itself prints it masked.
TOKEN = "gho_fAkEtOkEnThAtMuStNeVeRbEsHoWn0123"

_PROGRAM = r"""
import hashlib, json, os, sys, time
from pathlib import Path

here = Path(__file__).resolve().parent
config = json.loads((here / "gh.json").read_text())
log = Path(config["log"])
args = sys.argv[1:]
call = {"argv": args, "pid": os.getpid()}

def record(**more):
    with (log / "calls.jsonl").open("a") as out:
        out.write(json.dumps({**call, **more}) + "\n")

if args[:2] == ["auth", "status"]:
    record()
    if config["auth"] != "logged-in":
        sys.stderr.write(LOGGED_OUT + "\n")
        sys.exit(1)
    sys.stdout.write(
        "github.com\n"
        f"  \u2713 Logged in to github.com account {USER} (keyring)\n"
        "  - Active account: true\n"
        "  - Git operations protocol: https\n"
        f"  - Token: {TOKEN[:4]}{'*' * (len(TOKEN) - 4)}\n"
        "  - Token scopes: 'gist', 'read:org', 'repo'\n"
    )
    sys.exit(0)
if args[:2] == ["gist", "create"] and args[2:] and not args[-1].startswith("-"):
    path = Path(args[-1])
    text = path.read_text()
    record(file=str(path), text=text)
    name = path.name
    if config["gist"] == "hangs":
        # Renamed into place, so a reader never sees it half written.
        (log / "hanging.part").write_text(str(os.getpid()))
        (log / "hanging.part").rename(log / "hanging")
        time.sleep(120)
        sys.exit(1)
    sys.stderr.write(f"- Creating gist {name}\n")
    if config["gist"] == "fails":
        sys.stderr.write(GIST_FAILURE.partition("\n")[2] + "\n")
        sys.exit(1)
    secret = "--public=false" in args or "--public" not in args
    sys.stderr.write(f"\u2713 Created {'secret' if secret else 'public'} gist {name}\n")
    if config["gist"] == "created":
        gist_id = hashlib.md5(text.encode()).hexdigest()
        sys.stdout.write(f"https://gist.github.com/{USER}/{gist_id}\n")
    sys.exit(0)
record()
sys.stderr.write(f"unknown command {' '.join(args)!r} for \"gh\"\n")
sys.exit(1)
"""


@dataclass(frozen=True)
class FakeGh:
    """A ``gh`` in ``bin_dir`` (put it first on ``PATH``) recording into ``log_dir``."""

    bin_dir: Path
    log_dir: Path

    def configure(self, *, auth: Auth = "logged-in", gist: Gist = "created") -> None:
        """How the next calls answer."""
        config = {"log": str(self.log_dir), "auth": auth, "gist": gist}
        (self.bin_dir / "gh.json").write_text(json.dumps(config))

    def calls(self) -> list[dict[str, Any]]:
        path = self.log_dir / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def hanging_pid(self) -> int | None:
        """The process id of a ``gist create`` that hangs, once it started."""
        marker = self.log_dir / "hanging"
        return int(marker.read_text()) if marker.exists() else None

    def path_with_gh(self) -> str:
        """``PATH`` with this ``gh`` before every other."""
        return f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


def install_fake_gh(root: Path, *, auth: Auth = "logged-in", gist: Gist = "created") -> FakeGh:
    """A fake ``gh`` under ``root`` (``root/bin/gh``, its calls in ``root/log``)."""
    bin_dir, log_dir = root / "bin", root / "log"
    bin_dir.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    constants = (
        f"USER = {USER!r}\nLOGGED_OUT = {LOGGED_OUT!r}\n"
        f"GIST_FAILURE = {GIST_FAILURE!r}\nTOKEN = {TOKEN!r}\n"
    )
    program = bin_dir / "gh"
    program.write_text(f"#!{sys.executable}\n{constants}{_PROGRAM}")
    program.chmod(0o755)
    fake = FakeGh(bin_dir, log_dir)
    fake.configure(auth=auth, gist=gist)
    return fake


def gist_id_of(text: str) -> str:
    """The id the fake gives the gist of ``text`` (32 hex digits, as GitHub's are)."""
    import hashlib

    return hashlib.md5(text.encode()).hexdigest()
