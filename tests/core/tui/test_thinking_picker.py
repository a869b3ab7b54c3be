"""``/thinking`` without a level: Pi's thinking level selector. The real Pi judges every key
(``pi_thinking_selector.mjs`` drives Pi's own selector): the rows, their words, the current
level's mark and the default's, the search, the selected row, and the level chosen, with
Enter or with Ctrl+S as the default, which is then saved as Pi saves it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import run_pi_script
from support.terminal import DOWN, ENTER, ESC, UP, run_terminal

from ctxmodes.config import Settings
from ctxmodes.sdk import Agent, open_agent
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.saved_defaults import SavedDefaults

SCRIPT = Path(__file__).parents[2] / "support" / "pi_thinking_selector.mjs"
PROVIDERS = {
    "loop": {
        "api": "openai-completions",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key": "sk-loop",
        "models": [{"id": "deep", "reasoning": True}, {"id": "plain"}],
    }
}
BACKSPACE, CTRL_S = "\x7f", "\x13"
#: (the model, the session's level, the configured default, keybindings.json, the keys).
CASES: list[tuple[str, str, str, dict[str, Any], list[str]]] = [
    ("loop/deep", "medium", "medium", {}, [DOWN, DOWN, UP, ENTER]),
    # The search keeps the level selected while it matches, else the first.
    ("loop/deep", "medium", "medium", {}, ["h", "i", DOWN, BACKSPACE, BACKSPACE, CTRL_S]),
    ("loop/deep", "low", "high", {}, ["d", "e", "e", "p", UP, ENTER]),
    # ↑ and ↓ go round; Enter with no row shown does nothing; Esc closes.
    ("loop/deep", "high", "low", {}, [UP, UP, UP, UP, UP, UP, DOWN, ESC]),
    ("loop/deep", "off", "minimal", {}, ["q", "z", ENTER, BACKSPACE, ESC]),
    # A model that does not think has one level.
    ("loop/plain", "off", "medium", {}, [DOWN, CTRL_S]),
    # Ctrl+S comes before every bound key, as Pi checks it first.
    ("loop/deep", "medium", "medium", {"tui.select.down": ["down", "ctrl+s"]}, [DOWN, CTRL_S]),
]  # fmt: skip


def _agent(tmp_path: Path, model: str, level: str) -> Agent:
    settings = Settings.model_validate(
        {"mode": "off", "durability": "none", "model": model, "providers": PROVIDERS}
    )
    return open_agent(
        cwd=tmp_path, settings=settings, session_dir=tmp_path / "sessions", thinking_level=level
    )


def _our_view(t: Any) -> dict[str, Any]:
    picker = t.session.picker
    rows = picker.rows()
    return {
        "rows": [[row.key, row.fragments[0][1].rstrip(), row.fragments[1][1]] for row in rows],
        "selected": picker.selected if rows else None,
        "query": picker.query,
    }


@pytest.mark.pi
@pytest.mark.parametrize(("model", "level", "default", "bindings", "keys"), CASES)
def test_each_key_shows_and_chooses_what_pi_s_selector_does(
    model: str,
    level: str,
    default: str,
    bindings: dict[str, Any],
    keys: list[str],
    tmp_path: Path,
    agent_dir: Path,
) -> None:
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps(bindings))
    agent = _agent(tmp_path, model, level)
    current = agent.thinking_level
    spec = agent.session.model
    assert spec is not None
    levels = list(spec.capabilities.supported_thinking_levels())
    request = {
        "current": current,
        "levels": levels,
        "default": default,
        "keys": keys,
        "bindings": bindings,
    }
    pis = run_pi_script(SCRIPT, json.dumps(request))
    ours: list[dict[str, Any]] = []
    final: dict[str, str] = {}

    async def scenario(t: Any) -> None:
        await t.type("/thinking" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the thinking levels")
        ours.append(_our_view(t))
        for key, pi in zip(keys, pis[1:], strict=False):
            await (t.escape() if key == ESC else t.type(key))
            if pi["closed"]:
                await t.until(lambda: t.session.picker is None, "the list to close")
                if pi["chosen"]:
                    said = "Default thinking level: " if pi["asDefault"] else "Thinking level: "
                    await t.printed(said + pi["chosen"])
                break
            ours.append(_our_view(t))
        final["level"] = agent.thinking_level

    defaults = SavedDefaults(model, (), default)
    run_terminal(agent, scenario, keymap=KeyMap.load(path), defaults=defaults)
    open_steps = [step for step in pis if not step["closed"]]
    for at, (our, pi) in enumerate(zip(ours, open_steps, strict=True)):
        expected = {key: pi[key] for key in ("rows", "selected", "query")}
        assert our == expected, f"after {['(open)', *keys][at]!r} (step {at})"
    last = pis[-1]
    assert final["level"] == (last["chosen"] or current)
    saved = agent_dir / "settings.json"
    if last["asDefault"]:
        assert json.loads(saved.read_text()) == {"defaultThinkingLevel": last["chosen"]}
        assert defaults.thinking_level == last["chosen"]
    else:
        assert not saved.exists()
        assert defaults.thinking_level == default
