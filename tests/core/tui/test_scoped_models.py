"""``/scoped-models``: Pi's list of the models with credentials. The real Pi judges every
key (``pi_scoped_models.mjs`` drives Pi's own selector, opened and applied as Pi's
interactive mode opens and applies it): the rows, their order and marks, the lines under
them, the key hints and the running session's scope after each key. Then what ctxmodes
does on its own: Ctrl+P cycles the new scope, later sessions keep it, the save key says
in one line that nothing is saved and which setting to edit."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import PI_PACKAGE, require_pi_modules, run_pi_script
from support.terminal import ENTER, ESC, run_terminal

from ctxmodes.config import Settings
from ctxmodes.providers.auth import models_with_credentials
from ctxmodes.sdk import Agent, open_agent
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.saved_defaults import SavedDefaults

SCRIPT = Path(__file__).parents[2] / "support" / "pi_scoped_models.mjs"
ENDPOINT = {"api": "openai-completions", "base_url": "http://127.0.0.1:9/v1"}
PROVIDERS = {
    "loop": {
        **ENDPOINT,
        "api_key": "sk-loop",
        "models": [
            {"id": "plain", "name": "Plain One"},
            {"id": "deep", "reasoning": True},
            {"id": "wide"},
            {"id": "tall"},
            {"id": "short"},
            {"id": "dense"},
        ],
    },
    "far": {**ENDPOINT, "api_key": "sk-far", "models": [{"id": "x1"}, {"id": "dx"}, {"id": "z"}]},
}
KEYS = {
    "enter": "\r",
    "up": "\x1b[A",
    "down": "\x1b[B",
    "backspace": "\x7f",
    "ctrl+a": "\x01",
    "ctrl+e": "\x05",
    "ctrl+p": "\x10",
    "ctrl+s": "\x13",
    "ctrl+x": "\x18",
    "alt+up": "\x1b[1;3A",
    "alt+down": "\x1b[1;3B",
    "esc": ESC,
    "ctrl+c": "\x03",
    "ctrl+w": "\x17",
    "ctrl+y": "\x19",
    "ctrl+k": "\x0b",
    "ctrl+-": "\x1f",
    "alt+b": "\x1bb",
    "alt+y": "\x1by",
    "delete": "\x1b[3~",
}
CTRL_P = KEYS["ctrl+p"]
#: (the session's enabledModels, Pi's keybindings.json, the keys pressed).
CASES: list[tuple[list[str], dict[str, str], list[str]]] = [
    (
        ["loop/deep", "nope", "far/*"],
        {},
        [
            "enter", "down", "enter", "ctrl+p", "alt+up", "alt+down", "alt+down", "up", "up",
            "up", "ctrl+s", "ctrl+x", "d", "ctrl+a", "backspace", "down", "ctrl+p", "ctrl+p",
            "enter", "esc",
        ],
    ),
    ([], {}, ["enter", "down", "down", "enter", "alt+up", "f", "a", "r", "ctrl+x", "ctrl+a",
              "ctrl+x", "backspace", "backspace", "backspace", "up", "enter", "q", "q"]),
    (["nope", "gone/*"], {}, ["down", "enter", "ctrl+x", "ctrl+a", "ctrl+p", "down", "ctrl+p"]),
    (
        ["plain", "wide:high"],
        {"app.models.enableAll": "ctrl+e", "app.models.reorderDown": ["alt+down", "ctrl+s"]},
        ["ctrl+s", "ctrl+a", "ctrl+e", "enter", "ctrl+x"],
    ),
    # The search's editing keys; the list's own Ctrl+A and Ctrl+C come first, Ctrl+C
    # emptying the search as Pi's setValue does, which undo then takes back a step from.
    (
        ["loop/deep"],
        {},
        ["d", "e", "e", "p", " ", "x", "ctrl+w", "ctrl+w", "ctrl+y", "alt+b", "ctrl+k",
         "ctrl+a", "ctrl+-", "ctrl+c", "ctrl+-", "ctrl+y", "alt+y", "delete", "ctrl+x"],
    ),
]  # fmt: skip
_ROW = re.compile(r"^(→ |  )(✓ |  )(\S+)( \[[^\]]+\])$")


@pytest.fixture(autouse=True)
def _no_other_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN")):
            monkeypatch.delenv(name)


def _agent(tmp_path: Path) -> Agent:
    settings = Settings.model_validate(
        {"mode": "off", "durability": "none", "model": "loop/plain", "providers": PROVIDERS}
    )
    return open_agent(cwd=tmp_path, settings=settings, session_dir=tmp_path / "sessions")


def _keymap(tmp_path: Path, bindings: dict[str, Any]) -> KeyMap:
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps(bindings))
    return KeyMap.load(path)


def _pi_view(step: dict[str, Any]) -> dict[str, Any]:
    """What Pi's list shows, line by line, without its borders and spacing."""
    lines: list[str] = step["lines"]
    return {
        "query": step["query"],
        "rows": [line for line in lines if _ROW.match(line)],
        "under": [
            line
            for line in lines
            if re.match(r"^  (\(\d+/\d+\)|Model Name: |Model unavailable|No matching models)", line)
        ],
        "footer": next(line for line in lines if " toggle · " in line),
        "scope": step["scope"],
        "closed": step["closed"],
    }


def _our_view(t: Any) -> dict[str, Any]:
    session = t.session
    picker = session.picker
    scope = [scoped.model.ref for scoped in session.cycler.scope]
    if picker is None:
        return {"closed": True, "scope": scope}
    rows = picker.rows()
    drawn = [
        ("→ " if index == picker.selected else "  ") + "".join(text for _, text in row.fragments)
        for index, row in enumerate(rows)
    ]
    start = max(0, min(picker.selected - 4, len(rows) - 8))
    details = list(picker.details()) if rows else [picker.empty]
    return {
        "query": picker.query,
        "rows": drawn[start : start + 8],
        "under": details,
        "footer": picker.hint,
        "scope": scope,
        "closed": False,
    }


def _pi(models: list[dict[str, str]], patterns: list[str], bindings: Any, keys: list[str]) -> Any:
    request = {"models": models, "patterns": patterns, "keys": keys, "bindings": bindings}
    return run_pi_script(SCRIPT, json.dumps(request))


@pytest.mark.pi
@pytest.mark.parametrize(("patterns", "bindings", "keys"), CASES)
def test_each_key_shows_and_scopes_what_pi_s_list_does(
    patterns: list[str], bindings: dict[str, str], keys: list[str], tmp_path: Path, agent_dir: Path
) -> None:
    agent = _agent(tmp_path)
    available = models_with_credentials(agent.models())
    models = [{"provider": m.provider, "id": m.id, "name": m.name or m.id} for m in available]
    pressed = [KEYS.get(key, key) for key in keys]
    ours: list[dict[str, Any]] = []

    async def scenario(t: Any) -> None:
        await t.type("/scoped-models" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the list")
        ours.append(_our_view(t))
        for key in pressed:
            await (t.escape() if key == ESC else t.type(key))
            if key == ESC:  # a lone Esc is taken once no Alt key can follow it
                await t.until(lambda: t.session.picker is None, "the list to close")
            ours.append(_our_view(t))

    run_terminal(agent, scenario, model_patterns=patterns, keymap=_keymap(tmp_path, bindings))
    pis = _pi(models, patterns, bindings, pressed)
    for at, (our, pi) in enumerate(zip(ours, pis, strict=True)):
        expected = {"closed": True, "scope": pi["scope"]} if pi["closed"] else _pi_view(pi)
        assert our == expected, f"after {['(open)', *keys][at]!r} (step {at})"


def test_a_change_is_what_ctrl_p_cycles_and_later_sessions_keep(
    tmp_path: Path, agent_dir: Path
) -> None:
    agent = _agent(tmp_path)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("/scoped-models" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the list")
        # The scope is plain, wide; Enter on the third row adds deep after them.
        await t.type(KEYS["down"] + KEYS["down"] + ENTER)
        seen["rows"] = [row.key for row in t.session.picker.rows()][:3]
        await t.type(KEYS["ctrl+s"])
        seen["said"] = t.session.picker.notice[1]
        seen["defaults"] = t.session.defaults.enabled_models
        await t.type(ESC)
        await t.until(lambda: t.session.picker is None, "the list to close")
        await t.type(CTRL_P)
        await t.printed("Switched to wide")
        await t.type(CTRL_P)
        await t.printed("Switched to deep")
        await t.type(CTRL_P)
        await t.printed("Switched to Plain One")
        seen["completion"] = t.session._argument_values("model")
        await t.type("/new" + ENTER)
        await t.idle()
        seen["after new"] = [scoped.model.ref for scoped in t.session.cycler.scope]

    run_terminal(agent, scenario, model_patterns=["plain", "wide"])
    assert seen["rows"] == ["loop/plain", "loop/wide", "loop/deep"]
    assert seen["said"] == "Model selection saved to settings"
    # What /model's Ctrl+S then reads as the configured patterns, as in Pi.
    assert seen["defaults"] == ("loop/plain", "loop/wide", "loop/deep")
    saved = json.loads((agent_dir / "settings.json").read_text("utf-8"))
    assert saved["enabledModels"] == ["loop/plain", "loop/wide", "loop/deep"]
    assert seen["completion"] == ["loop/plain", "loop/wide", "loop/deep"]
    assert seen["after new"] == ["loop/plain", "loop/wide", "loop/deep"]


def test_every_model_in_the_scope_is_no_scope_and_its_save_removes_the_setting(
    tmp_path: Path, agent_dir: Path
) -> None:
    agent = _agent(tmp_path)
    settings = agent_dir / "settings.json"
    settings.write_text('{"enabledModels": ["loop/plain"], "theme": "dark"}', "utf-8")
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("/scoped-models" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the list")
        await t.type(KEYS["ctrl+a"] + KEYS["ctrl+s"])
        seen["said"] = t.session.picker.notice[1]
        seen["defaults"] = t.session.defaults.enabled_models
        seen["scope"] = t.session.cycler.scope

    defaults = SavedDefaults(None, ("plain", "wide"))
    run_terminal(agent, scenario, model_patterns=["plain", "wide"], defaults=defaults)
    assert seen["scope"] == ()
    assert seen["said"] == "Model selection saved to settings"
    assert seen["defaults"] == ()
    assert settings.read_text("utf-8") == '{\n  "theme": "dark"\n}'


def test_the_keys_and_texts_are_pis() -> None:
    """The list's action ids, default keys and the texts it shares with Pi's
    ``scoped-models-selector.js`` (and ``core/keybindings.js``) are Pi's."""
    from ctxmodes.tui import scoped_models
    from ctxmodes.tui.keymap import DEFAULTS
    from ctxmodes.tui.scope_selection import ScopeSelection

    dist = require_pi_modules() / PI_PACKAGE.parent / "dist"
    source = (dist / "modes/interactive/components/scoped-models-selector.js").read_text()
    bindings = (dist / "core/keybindings.js").read_text()
    pis = dict(re.findall(r'"(app\.models\.\w+)": \{\s*defaultKeys: "([^"]+)"', bindings))
    ours = {action: keys for action, keys in DEFAULTS.items() if action.startswith("app.models.")}
    assert ours == {action: (key,) for action, key in pis.items()}
    assert set(re.findall(r'"(app\.models\.\w+)"', source)) == set(ours)
    assert f'"{scoped_models.TITLE}"' in source
    assert f"maxVisible = {scoped_models.VISIBLE_ROWS};" in source
    for text in ("No matching models", "Model unavailable", "Model Name: ", " [unavailable]"):
        assert text in source
    for label in ("toggle", "all", "clear", "provider", "reorder"):
        assert f"`}} {label}`" in source or f'")}} {label}`' in source, label
    assert ScopeSelection({}, None).count_text() == "all enabled"
    assert '"all enabled"' in source
    assert "enabled${unavailableCount ? ` · ${" in source
