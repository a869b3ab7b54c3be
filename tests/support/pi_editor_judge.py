"""The real pi-tui ``Editor`` as a judge: the text and cursor after every key of each run of
keys, Pi's beside ours (``pi_text_editor.mjs``), with Pi's default keys."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ctxmodes.tui.keymap import KeyMap
from support.pi_oracle import run_pi_script

SCRIPT = Path(__file__).with_name("pi_text_editor.mjs")

Steps = list[dict[str, Any]]


def judge_with_pi_editor(
    runs: list[list[str]],
    ours: Callable[[list[list[str]], KeyMap], list[Steps]],
    tmp_path: Path,
    *,
    width: int | None = None,
    history: Sequence[str] = (),
) -> None:
    """``ours(runs, keymap)`` (``{value, cursor}`` before the first key and after each) must
    equal what Pi's editor does with the same keys, step by step, after the prompts
    ``history`` were sent (the oldest first). With a ``width``, Pi's editor is drawn at it
    after each key, and each step also holds its ``rows``: ``[text, cursor or None]``."""
    request = tmp_path / "request.json"
    request.write_text(
        json.dumps(
            {
                "bindings": {},
                "runs": [{"keys": k, "width": width, "history": list(history)} for k in runs],
            }
        )
    )
    pis = run_pi_script(SCRIPT, str(request))
    keymap = KeyMap.load(tmp_path / "keybindings.json")
    for keys, our, pi in zip(runs, ours(runs, keymap), pis, strict=True):
        for at, (our_step, pi_step) in enumerate(zip(our, pi, strict=True)):
            pressed = " ".join(repr(key) for key in keys[:at])
            assert our_step == pi_step, f"after {pressed}"
