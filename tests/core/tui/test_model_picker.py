"""``/model`` and ``/model TEXT``: Pi's model selector and its scope. The real Pi judges
every key (``pi_model_selector.mjs`` drives Pi's own selector, opened on the session's scope
as Pi's interactive mode opens it, with TEXT searched when TEXT names no model exactly):
whether TEXT switches at once and to which model, the scope lines and which list they
highlight, the search and where typing goes in it, the rows, their order, the current
model's mark, the default's place and mark, the selected row, the lines under the rows and
the model chosen, with Enter or as the default with Ctrl+S (saved in ``settings.json``
as Pi saves it). Then what
ctxmodes does on its own: ``/scoped-models``' change is the scope ``/model`` opens on, Pi's
``app.model.select`` key opens the same picker, each row keeps its credential mark, and
``/model`` takes a model with a ``:<level>`` and a scheme's spec."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import PI_PACKAGE, require_agent_node, require_pi_modules, run_pi_script
from support.terminal import DOWN, ENTER, ESC, TAB, UP, run_terminal

from ctxmodes.config import Settings
from ctxmodes.providers.auth import models_with_credentials
from ctxmodes.sdk import Agent, open_agent
from ctxmodes.tui import model_picker
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.model_picker import NO_SCOPE_LINE, provider_order
from ctxmodes.tui.saved_defaults import SavedDefaults

SCRIPT = Path(__file__).parents[2] / "support" / "pi_model_selector.mjs"
PI_SAVE = Path(__file__).parents[2] / "support" / "pi_settings_save.mjs"
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
    # ICU orders "_" before "-", unlike code points: the two names test the provider order.
    "far-b": {**ENDPOINT, "api_key": "sk-b", "models": [{"id": "r"}, {"id": "s"}]},
    # "short" is loop's id too: alone, it names no model exactly.
    "far_b": {
        **ENDPOINT,
        "api_key": "sk-c",
        "models": [{"id": "q", "name": "Queue"}, {"id": "short"}],
    },
}
BACKSPACE = "\x7f"
LEFT, RIGHT, HOME, END = "\x1b[D", "\x1b[C", "\x1b[H", "\x1b[F"
CTRL_A, CTRL_B, CTRL_E, CTRL_F, CTRL_S = "\x01", "\x02", "\x05", "\x06", "\x13"
CTRL_D, CTRL_U, UNDO, DELETE = "\x04", "\x15", "\x1f", "\x1b[3~"
ALT_B, ALT_D, ALT_F, ALT_Y = "\x1bb", "\x1bd", "\x1bf", "\x1by"
CTRL_LEFT, ALT_BACKSPACE = "\x1b[1;5D", "\x1b\x7f"
#: (the session's model, its scope's patterns, the text after ``/model``, the keys pressed).
CASES: list[tuple[str, list[str], str, list[str]]] = [
    ("loop/plain", ["far/*", "loop/deep"], "",
     [TAB, TAB, "d", TAB, BACKSPACE, DOWN, TAB, UP, UP, TAB, ENTER]),
    ("loop/plain", [], "", [DOWN, TAB, "x", BACKSPACE, UP, UP, "q", ENTER]),
    ("loop/wide", ["deep", "wide:high", "far_b/q"], "",
     [DOWN, TAB, "e", DOWN, TAB, DOWN, BACKSPACE, TAB, ESC]),
    ("far/z", ["far-b/*", "loop/tall"], "",
     ["z", "z", TAB, BACKSPACE, BACKSPACE, TAB, DOWN, ENTER]),
    # TEXT naming no model exactly: the selector opens with it searched, the cursor before it.
    ("loop/plain", [], "d", [DOWN, "x", BACKSPACE, END, "x", BACKSPACE, DOWN, ENTER]),
    ("loop/plain", [], "short",
     [DOWN, HOME, "s", LEFT, RIGHT, BACKSPACE, CTRL_F, CTRL_F, CTRL_B, "r", CTRL_E, ENTER]),
    ("loop/wide", ["far/*", "loop/deep"], "x", [TAB, DOWN, TAB, UP, ENTER]),
    ("loop/plain", ["far/*", "loop/deep"], "loop/tall", [TAB, ENTER]),
    ("far/z", ["far-b/*", "loop/tall"], "zz", [ENTER, CTRL_A, "r", ENTER, BACKSPACE, ESC]),
    # Pi's Input's editing keys in the search, each filtering again (a key it ignores, Ctrl+G
    # or an Alt key no action has, too: the best match selected once more); unicode is typed
    # and deleted a grapheme at once.
    ("loop/plain", [], "",
     [*"deep x", "\x17", "\x17", "\x19", ALT_B, "\x0b", "\x19", ALT_Y, UNDO, HOME, ALT_D,
      DELETE, "d", CTRL_D, END, DOWN, "\x07", DOWN, DOWN, CTRL_U, UNDO, DOWN, ENTER]),
    ("loop/plain", [], "far/x1",
     [DOWN, ALT_F, ALT_F, CTRL_LEFT, "ü", "👍", "🏽", ALT_BACKSPACE, BACKSPACE, BACKSPACE, LEFT,
      "\x19", ALT_Y, UNDO, ALT_D, "\x19", DOWN, "\x1bu", "\x1b\x07", DOWN, ESC]),
    # A suffix that is no thinking level is searched too.
    ("loop/plain", [], "wide:hi", [RIGHT, RIGHT, DOWN, ESC]),
    # TEXT naming one exactly, ignoring case and the spaces around the parts of provider/id.
    ("loop/plain", [], "far/X1", []),
    ("loop/plain", [], "loop / deep", []),
    ("loop/plain", [], "dense", []),
    ("loop/plain", ["far/*", "loop/deep"], "DEEP", []),
]  # fmt: skip
#: (the session's model, its scope's patterns, the configured default, the keys pressed).
DEFAULT_CASES: list[tuple[str, list[str], str, list[str]]] = [
    # The default comes second and is marked; Enter chooses without making a default.
    ("loop/plain", [], "far/z", [DOWN, DOWN, ENTER]),
    # The beginning of "default" puts the default first; Ctrl+S makes the row a default.
    ("loop/plain", [], "loop/tall", ["d", "e", "f", DOWN, CTRL_S]),
    ("loop/plain", [], "loop/tall", ["d", "e", "f", "x", BACKSPACE, CTRL_S]),
    # In the scoped list the default keeps its place, marked.
    ("loop/wide", ["far/*", "loop/deep"], "far/z", [TAB, DOWN, CTRL_S]),
    ("loop/wide", ["far/*", "loop/deep"], "loop/deep", [DOWN, CTRL_S]),
    # Ctrl+S with no row shown does nothing.
    ("loop/plain", [], "loop/deep", ["y", "w", CTRL_S, ESC]),
]  # fmt: skip
_ROW = re.compile(r"^(→ |  )(✓ |  )(\S+) \[([^\]]+)\]( · default)?$")
_UNDER = re.compile(r"^  (\(\d+/\d+\)|Model Name: |No matching models)")


@pytest.fixture(autouse=True)
def _no_other_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN")):
            monkeypatch.delenv(name)


def _agent(tmp_path: Path, model: str = "loop/plain") -> Agent:
    settings = Settings.model_validate(
        {"mode": "off", "durability": "none", "model": model, "providers": PROVIDERS}
    )
    return open_agent(cwd=tmp_path, settings=settings, session_dir=tmp_path / "sessions")


def _pi_view(step: dict[str, Any]) -> dict[str, Any]:
    """What Pi's selector shows, without its borders, spacing and Pi's own hint lines."""
    lines: list[str] = step["lines"]
    at_query = next(index for index, line in enumerate(lines) if line.startswith(">"))
    rows = [match for line in lines if (match := _ROW.match(line))]
    return {
        "header": [line for line in lines[1:at_query] if line],
        "highlighted": step["scope"] if lines[2].startswith("Scope: ") else None,
        "query": step["query"],
        "cursor": step["cursor"],
        "rows": [f"{row[4]}/{row[3]}" for row in rows],
        "selected": next((i for i, row in enumerate(rows) if row[1] == "→ "), None),
        "current": [f"{row[4]}/{row[3]}" for row in rows if row[2] == "✓ "],
        "default": [f"{row[4]}/{row[3]}" for row in rows if row[5]],
        "under": [line for line in lines if _UNDER.match(line)],
    }


def _our_view(t: Any) -> dict[str, Any]:
    picker = t.session.picker
    rows = picker.rows()
    start = max(0, min(picker.selected - 5, len(rows) - model_picker.VISIBLE_ROWS))
    shown = rows[start : start + model_picker.VISIBLE_ROWS]
    header = picker.header()
    highlighted = [text for style, text in header[0] if style == "class:picker.active"]
    return {
        "header": ["".join(text for _, text in line) for line in header],
        "highlighted": highlighted[0] if highlighted else None,
        "query": picker.query,
        "cursor": picker.query_cursor,
        "rows": [row.key for row in shown],
        "selected": picker.selected - start if rows else None,
        "current": [row.key for row in shown if row.fragments[0][0] == "class:picker.active"],
        "default": [row.key for row in shown if row.fragments[-1][1] == " · default"],
        "under": list(picker.details()) if rows else [picker.empty],
    }


def _pi(request: dict[str, Any]) -> Any:
    return run_pi_script(SCRIPT, json.dumps(request))


@pytest.mark.pi
@pytest.mark.parametrize(("current", "patterns", "search", "keys"), CASES)
def test_each_key_shows_what_pi_s_selector_does(
    current: str, patterns: list[str], search: str, keys: list[str], tmp_path: Path
) -> None:
    _judge_keys(tmp_path, current, patterns, search, keys, {})


CTRL_G, CTRL_K, CTRL_O, CTRL_T, CTRL_W, CTRL_Y = "\x07", "\x0b", "\x0f", "\x14", "\x17", "\x19"
#: Pi's keys moved in keybindings.json: Ctrl+K switches the scope rather than moving up, as
#: Pi's selector checks the scope key first; Enter, which Pi's search field submits with,
#: still chooses.
REBOUND = {
    "tui.input.tab": ["ctrl+t", "ctrl+k"],
    "tui.select.up": "ctrl+k",
    "tui.select.down": "ctrl+y",
    "tui.select.confirm": "ctrl+o",
    "tui.select.cancel": "ctrl+g",
    "tui.editor.deleteCharBackward": "ctrl+w",
    "tui.editor.cursorLeft": "ctrl+a",
}
REBOUND_CASES: list[tuple[list[str], list[str]]] = [
    (["far/*", "loop/deep"],
     [CTRL_T, TAB, CTRL_Y, CTRL_K, "d", "e", CTRL_A, CTRL_W, LEFT, BACKSPACE, DOWN, ESC,
      CTRL_Y, CTRL_O]),
    ([], [CTRL_Y, CTRL_Y, UP, ESC, CTRL_G]),
    ([], ["q", CTRL_W, CTRL_Y, ENTER]),
]  # fmt: skip


@pytest.mark.pi
@pytest.mark.parametrize(("patterns", "keys"), REBOUND_CASES)
def test_keys_rebound_in_keybindings_json_act_as_in_pi_s_selector(
    patterns: list[str], keys: list[str], tmp_path: Path
) -> None:
    _judge_keys(tmp_path, "loop/plain", patterns, "", keys, REBOUND)


@pytest.mark.pi
@pytest.mark.parametrize(("current", "patterns", "default", "keys"), DEFAULT_CASES)
def test_the_default_model_is_shown_found_and_set_as_in_pi_s_selector(
    current: str,
    patterns: list[str],
    default: str,
    keys: list[str],
    tmp_path: Path,
    agent_dir: Path,
) -> None:
    _judge_keys(tmp_path, current, patterns, "", keys, {}, default)
    saved = agent_dir / "settings.json"
    if CTRL_S not in keys or keys[-1] == ESC:
        assert not saved.exists()


def _judge_keys(
    tmp_path: Path,
    current: str,
    patterns: list[str],
    search: str,
    keys: list[str],
    bindings: dict[str, Any],
    default: str | None = None,
) -> None:
    """Our picker and Pi's selector, given the same keys with ``bindings`` and the
    configured ``default``, show the same after each and choose the same model, as the
    default or not (a default is then saved as Pi saves it)."""
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps(bindings))
    agent = _agent(tmp_path, current)
    available = models_with_credentials(agent.models())
    provider, _, model_id = current.partition("/")
    request = {
        "models": [{"provider": m.provider, "id": m.id, "name": m.name or m.id} for m in available],
        "patterns": patterns,
        "current": {"provider": provider, "id": model_id},
        "keys": keys,
        "search": search,
        "bindings": bindings,
    }
    if default is not None:
        request["default"] = dict(zip(("provider", "id"), default.split("/", 1), strict=True))
    pis = _pi(request)
    ours: list[dict[str, Any]] = []
    chosen: dict[str, str | None] = {}

    async def scenario(t: Any) -> None:
        await t.type(f"/model {search}".rstrip() + ENTER)
        if pis["exact"] is not None:
            await t.printed("Model: ")
            assert t.session.picker is None
            chosen["model"] = _current(agent)
            return
        await t.until(lambda: t.session.picker is not None, "the model picker")
        ours.append(_our_view(t))
        for key, pi in zip(keys, pis["steps"][1:], strict=True):
            await (t.escape() if key == ESC else t.type(key))
            if pi["closed"]:
                await t.until(lambda: t.session.picker is None, "the picker to close")
                if pi["chosen"]:
                    await t.printed("Default model: " if pi["asDefault"] else "Model: ")
                break
            ours.append(_our_view(t))
        chosen["model"] = _current(agent)

    defaults = SavedDefaults(default, tuple(patterns))
    run_terminal(
        agent, scenario, model_patterns=patterns, keymap=KeyMap.load(path), defaults=defaults
    )
    if pis["exact"] is not None:
        assert chosen["model"] == pis["exact"]
        return
    steps = pis["steps"]
    # Pi's selector stays open on Enter with no row to choose, as ours does.
    pi_open = [step for step in steps if not step["closed"]]
    for at, (our, pi) in enumerate(zip(ours, pi_open, strict=True)):
        assert our == _pi_view(pi), f"after {['(open)', *keys][at]!r} (step {at})"
    assert chosen["model"] == (steps[-1]["chosen"] or current)
    if steps[-1]["asDefault"]:
        provider, _, model_id = steps[-1]["chosen"].partition("/")
        saved = json.loads((Path(os.environ["PI_CODING_AGENT_DIR"]) / "settings.json").read_text())
        assert (saved["defaultProvider"], saved["defaultModel"]) == (provider, model_id)
        assert defaults.model == steps[-1]["chosen"]


def _current(agent: Agent) -> str | None:
    model = agent.session.model
    return None if model is None else f"{model.provider}/{model.id}"


@pytest.mark.pi
def test_a_default_outside_the_scope_joins_it_and_its_patterns_as_in_pi(
    tmp_path: Path, agent_dir: Path
) -> None:
    """Pi's ``setModel`` with ``persist``: a default the running scope lacks joins it, and
    joins the configured ``enabledModels`` (none of which names it), in one file that is
    Pi's own for the same two saves."""
    agent = _agent(tmp_path)
    patterns = ["far/*", "LOOP/DEEP"]
    defaults = SavedDefaults("loop/plain", tuple(patterns))
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("/model" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the model picker")
        await t.type(TAB + "tall" + CTRL_S)
        await t.printed("Default model: loop/tall")
        seen["scope"] = [scoped.model.ref for scoped in t.session.cycler.scope]
        # Already in the scope: set as default again, the patterns stay as they are.
        await t.type("/model" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the model picker")
        await t.type("z" + CTRL_S)
        await t.printed("Default model: far/z")

    run_terminal(agent, scenario, model_patterns=patterns, defaults=defaults)
    assert seen["scope"] == ["far/x1", "far/dx", "far/z", "loop/deep", "loop/tall"]
    assert defaults == SavedDefaults("far/z", ("far/*", "LOOP/DEEP", "loop/tall"))
    pi_agent = tmp_path / "pi-agent"
    pi_agent.mkdir()
    calls = [
        ["setDefaultModelAndProvider", "loop", "tall"],
        ["setEnabledModels", [*patterns, "loop/tall"]],
        ["setDefaultModelAndProvider", "far", "z"],
    ]
    request = [{"agentDir": str(pi_agent), "cwd": str(tmp_path), "calls": calls}]
    assert run_pi_script(PI_SAVE, json.dumps(request)) == [[]]
    saved = (agent_dir / "settings.json").read_bytes()
    assert saved == (pi_agent / "settings.json").read_bytes()


@pytest.mark.slow  # two pickers in a terminal session
def test_a_scope_set_by_scoped_models_is_the_one_the_picker_opens_on(tmp_path: Path) -> None:
    """``/scoped-models``' change this run is the picker's scope, in its order, drawn
    between the title and the search; Pi's ``app.model.select`` key (Ctrl+L) opens the same
    picker, and a row keeps where its credentials come from."""
    agent = _agent(tmp_path)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("/scoped-models" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the list")
        # The scope is plain, wide; Enter on the third row adds deep after them.
        await t.type(DOWN + DOWN + ENTER + ESC)
        await t.until(lambda: t.session.picker is None, "the list to close")
        await t.type("\x0c")
        await t.until(lambda: t.session.picker is not None, "the model picker")
        picker = t.session.picker
        seen["drawn"] = "".join(text for _, text in picker.fragments(100)).splitlines()
        seen["rows"] = [row.key for row in picker.rows()]
        seen["marks"] = {row.fragments[-1][1].strip() for row in picker.rows()}
        await t.type(TAB)
        seen["after tab"] = [row.key for row in picker.rows()][:3]
        await t.type(TAB + DOWN + ENTER)
        await t.printed("Model: wide")

    run_terminal(agent, scenario, model_patterns=["plain", "wide"])
    assert seen["drawn"][:4] == [
        "Model (now loop/plain)",
        "Scope: all | scoped",
        "tab scope (all/scoped)",
        ">  ",  # the cursor, drawn reversed
    ]
    assert seen["rows"] == ["loop/plain", "loop/wide", "loop/deep"]
    assert seen["marks"] == {"configured API key"}
    assert seen["after tab"] == ["loop/plain", "far/x1", "far/dx"]


def test_the_texts_and_the_key_are_pis() -> None:
    """The lines and the key the picker shares with Pi's ``model-selector.js`` are Pi's."""
    dist = require_pi_modules() / PI_PACKAGE.parent / "dist"
    source = (dist / "modes/interactive/components/model-selector.js").read_text()
    assert f'"{NO_SCOPE_LINE}"' in source
    assert f'"{model_picker.NO_MATCH}"' in source
    assert f"maxVisible = {model_picker.VISIBLE_ROWS};" in source
    assert f'keyHint("{model_picker.SCOPE_KEY_ACTION}", "scope") + ' in source
    assert '" (all/scoped)"' in source
    for text in ('"Scope: "', '" | "', '"all"', '"scoped"', "Model Name: "):
        assert text in source, text
    bindings = require_pi_modules() / PI_PACKAGE.parent.parent / "pi-tui/dist/keybindings.js"
    assert re.search(r'"tui\.input\.tab": \{\s*defaultKeys: "tab"', bindings.read_text())


@pytest.mark.pi
def test_providers_are_ordered_as_javascript_s_locale_compare() -> None:
    names = ["loop", "far_b", "Far", "far-b", "far", "fAr", "far2", "far.b", "fa", "a-1", "A"]
    script = (
        "const names = JSON.parse(process.argv[1]);"
        "console.log(JSON.stringify(names.sort((a, b) => a.localeCompare(b))))"
    )
    result = subprocess.run(
        [require_agent_node(), "-e", script, json.dumps(names)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert sorted(names, key=provider_order) == json.loads(result.stdout)


def test_model_text_may_end_in_a_thinking_level_as_ctxmodes_takes_it(tmp_path: Path) -> None:
    """ctxmodes' ``/model provider/id:<level>``, which Pi lacks, switches at that level; a
    model whose own id ends in a level is still the model its whole text names, as in Pi."""
    odd = {**ENDPOINT, "api_key": "sk-odd", "models": [{"id": "deep:high", "reasoning": True}]}
    settings = Settings.model_validate(
        {
            "mode": "off",
            "durability": "none",
            "model": "loop/plain",
            "providers": {**PROVIDERS, "odd": odd},
        }
    )
    agent = open_agent(cwd=tmp_path, settings=settings, session_dir=tmp_path / "sessions")
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("/model LOOP/deep:low" + ENTER)
        await t.printed("Model: deep")
        seen["leveled"] = (_current(agent), agent.thinking_level, t.session.picker)
        await t.type("/model odd/deep:high" + ENTER)
        await t.printed("Model: deep:high")
        seen["whole"] = (_current(agent), t.session.picker)

    run_terminal(agent, scenario)
    assert seen["leveled"] == ("loop/deep", "low", None)
    assert seen["whole"] == ("odd/deep:high", None)


def test_a_level_after_a_model_outside_the_scope_is_searched(tmp_path: Path) -> None:
    """With a scope, only its models are switched to at once, with a level or without."""
    agent = _agent(tmp_path)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("/model far/x1:high" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the model picker")
        seen["query"] = t.session.picker.query
        seen["rows"] = [row.key for row in t.session.picker.rows()]
        await t.type(ESC)
        await t.until(lambda: t.session.picker is None, "the picker to close")
        seen["model"] = _current(agent)

    run_terminal(agent, scenario, model_patterns=["loop/*"])
    assert seen == {"query": "far/x1:high", "rows": [], "model": "loop/plain"}
