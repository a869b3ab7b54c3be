"""Pi's own settings carry over: each honoured key of Pi's ``settings.json`` (the agent
directory's, a trusted project's ``.pi/settings.json`` over it) is the lowest layer of
ctxmodes' settings, named in ``config show`` by its file and Pi's key."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ctxmodes.config import DEFAULT_SOURCE, flatten, load_settings
from ctxmodes.errors import ConfigError
from ctxmodes.pi_settings import HONOURED


@dataclass(frozen=True)
class Case:
    pi_key: str
    #: The dotted key ``config show`` prints.
    shown: str
    #: Set in the global file, in the project's, and in ctxmodes' own ``config.toml``.
    global_value: Any
    project_value: Any
    ctxmodes_toml: str
    ctxmodes_value: Any
    #: A value of the wrong JSON type, and how the error words it.
    wrong: Any
    wrong_words: str


CASES = [
    Case("defaultThinkingLevel", "thinking_level", "high", "low",
         'thinking_level = "minimal"', "minimal", 3, "expected a string, got a number (3)"),
    Case("steeringMode", "steering_mode", "all", "one-at-a-time",
         'steering_mode = "all"', "all", True, "expected a string, got a boolean (true)"),
    Case("followUpMode", "follow_up_mode", "all", "one-at-a-time",
         'follow_up_mode = "all"', "all", ["all"], "expected a string, got an array"),
    Case("compaction.enabled", "compaction.enabled", False, True,
         "[compaction]\nenabled = false", False, "false",
         'expected a boolean, got a string ("false")'),
    Case("compaction.reserveTokens", "compaction.reserve_tokens", 8192, 4096,
         "[compaction]\nreserve_tokens = 1000", 1000, "8192",
         'expected a number, got a string ("8192")'),
    Case("compaction.keepRecentTokens", "compaction.keep_recent_tokens", 30000, 5000,
         "[compaction]\nkeep_recent_tokens = 100", 100, {"tokens": 1},
         "expected a number, got an object"),
    Case("branchSummary.reserveTokens", "branch_summary.reserve_tokens", 8000, 2000,
         "[branch_summary]\nreserve_tokens = 100", 100, True,
         "expected a number, got a boolean (true)"),
    Case("branchSummary.skipPrompt", "branch_summary.skip_prompt", True, False,
         "[branch_summary]\nskip_prompt = true", True, 1, "expected a boolean, got a number (1)"),
    Case("retry.enabled", "retry.enabled", False, True,
         "[retry]\nenabled = false", False, "no", 'expected a boolean, got a string ("no")'),
    Case("retry.maxRetries", "retry.max_retries", 5, 7,
         "[retry]\nmax_retries = 1", 1, "3", 'expected a number, got a string ("3")'),
    Case("retry.baseDelayMs", "retry.base_delay_ms", 500, 1000,
         "[retry]\nbase_delay_ms = 100", 100, 2.5, "expected a whole number, got 2.5"),
    Case("retry.provider.timeoutMs", "retry.provider.timeout_ms", 1000, 2000,
         "[retry.provider]\ntimeout_ms = 3000", 3000, "1s",
         'expected a number, got a string ("1s")'),
    Case("retry.provider.maxRetries", "retry.provider.max_retries", 2, 4,
         "[retry.provider]\nmax_retries = 1", 1, False, "expected a number, got a boolean (false)"),
    Case("enableSkillCommands", "terminal.skill_commands", False, True,
         "[terminal]\nskill_commands = false", False, "no",
         'expected a boolean, got a string ("no")'),
    # Pi's oldest spelling, which Pi moves to enableSkillCommands.
    Case("skills.enableSkillCommands", "terminal.skill_commands", False, True,
         "[terminal]\nskill_commands = false", False, "no",
         'expected a boolean, got a string ("no")'),
    Case("treeFilterMode", "terminal.tree_filter", "user-only", "no-tools",
         '[terminal]\ntree_filter = "all"', "all", 1, "expected a string, got a number (1)"),
    Case("doubleEscapeAction", "terminal.double_escape_action", "fork", "none",
         '[terminal]\ndouble_escape_action = "tree"', "tree", False,
         "expected a string, got a boolean (false)"),
    Case("externalEditor", "terminal.external_editor", "vim", "code --wait",
         '[terminal]\nexternal_editor = "nano"', "nano", False,
         "expected a string, got a boolean (false)"),
    Case("autocompleteMaxVisible", "terminal.completion_rows", 5, 8,
         "[terminal]\ncompletion_rows = 12", 12, "5", 'expected a number, got a string ("5")'),
    Case("quietStartup", "terminal.quiet_startup", True, False,
         "[terminal]\nquiet_startup = true", True, "yes",
         'expected a boolean, got a string ("yes")'),
    Case("hideThinkingBlock", "terminal.hide_thinking", False, True,
         "[terminal]\nhide_thinking = false", False, "yes",
         'expected a boolean, got a string ("yes")'),
    Case("showCacheMissNotices", "terminal.cache_miss_notices", True, False,
         "[terminal]\ncache_miss_notices = false", False, 1,
         "expected a boolean, got a number (1)"),
    Case("warnings.anthropicExtraUsage", "terminal.anthropic_extra_usage_warning", False,
         True, "[terminal]\nanthropic_extra_usage_warning = false", False, "off",
         'expected a boolean, got a string ("off")'),
    Case("images.blockImages", "block_images", True, False, "block_images = true", True,
         "true", 'expected a boolean, got a string ("true")'),
    Case("images.autoResize", "auto_resize_images", False, True,
         "auto_resize_images = false", False, 0, "expected a boolean, got a number (0)"),
    Case("retry.provider.maxRetryDelayMs", "retry.provider.max_retry_delay_ms", 5000, 1000,
         "[retry.provider]\nmax_retry_delay_ms = 0", 0, [60000], "expected a number, got an array"),
    Case("sessionDir", "session_dir", "/srv/pi-sessions", ".pi/sessions",
         'session_dir = "~/sessions"', "~/sessions", 5, "expected a string, got a number (5)"),
    Case("defaultTools", "default_tools", ["read", "bash"], ["read"],
         'default_tools = ["edit"]', ["edit"], "read",
         'expected an array of strings, got a string ("read")'),
    Case("enabledModels", "enabled_models", ["anthropic/*", "gpt-5:high"], ["local/m"],
         'enabled_models = ["sonnet"]', ["sonnet"], "gpt-5",
         'expected an array of strings, got a string ("gpt-5")'),
    *(
        Case(f"thinkingBudgets.{level}", f"thinking_budgets.{level}", 3000, 1500,
             f"[thinking_budgets]\n{level} = 700", 700, "4k",
             'expected a number, got a string ("4k")')
        for level in ("minimal", "low", "medium", "high")
    ),
    Case("shellPath", "shell.path", "~/bin/bash", "/opt/bash",
         '[shell]\npath = "/usr/local/bin/bash"', "/usr/local/bin/bash", ["/bin/bash"],
         "expected a string, got an array"),
    Case("shellCommandPrefix", "shell.command_prefix", "shopt -s expand_aliases", "set -e",
         '[shell]\ncommand_prefix = "set -u"', "set -u", {"lines": []},
         "expected a string, got an object"),
]  # fmt: skip
IDS = [case.pi_key for case in CASES]


def test_every_honoured_key_is_tested():
    legacy = {"skills.enableSkillCommands"}
    assert {case.pi_key for case in CASES} == set(HONOURED) | legacy


def _write(directory: Path, values: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "settings.json"
    path.write_text(json.dumps(values))
    return path


def _pi(key: str, value: Any) -> dict[str, Any]:
    """``{"retry": {"maxRetries": 5}}`` for ``retry.maxRetries``."""
    *tables, leaf = key.split(".")
    nested: dict[str, Any] = {leaf: value}
    for name in reversed(tables):
        nested = {name: nested}
    return nested


def _shown(project: Path, user_dir: Path) -> tuple[dict[str, Any], dict[str, str]]:
    loaded = load_settings(cwd=project, environ={"CTXMODES_CONFIG_DIR": str(user_dir)})
    return flatten(loaded.settings.model_dump()), loaded.origins


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_global_pi_setting_is_honoured_and_named(case, project, user_dir, agent_dir):
    values, origins = _shown(project, user_dir)
    assert origins[case.shown] == DEFAULT_SOURCE
    path = _write(agent_dir, _pi(case.pi_key, case.global_value))
    values, origins = _shown(project, user_dir)
    assert values[case.shown] == case.global_value
    assert origins[case.shown] == f"{path} (Pi's {case.pi_key})"
    # Every other key keeps its default: one setting sets one value.
    assert [key for key, source in origins.items() if source != DEFAULT_SOURCE] == [case.shown]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_trusted_projects_pi_setting_wins_and_an_untrusted_ones_is_not_read(
    case, project, clone, user_dir, agent_dir
):
    _write(agent_dir, _pi(case.pi_key, case.global_value))
    for directory in (project, clone):
        _write(directory / ".pi", _pi(case.pi_key, case.project_value))
    values, origins = _shown(project, user_dir)
    assert values[case.shown] == case.project_value
    assert origins[case.shown] == f"{project / '.pi' / 'settings.json'} (Pi's {case.pi_key})"
    values, origins = _shown(clone, user_dir)
    assert values[case.shown] == case.global_value
    assert origins[case.shown].startswith(str(agent_dir / "settings.json"))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_ctxmodes_own_configuration_wins_over_pi(case, project, user_dir, agent_dir):
    _write(agent_dir, _pi(case.pi_key, case.global_value))
    _write(project / ".pi", _pi(case.pi_key, case.project_value))
    (user_dir / "config.toml").write_text(case.ctxmodes_toml + "\n")
    values, origins = _shown(project, user_dir)
    assert values[case.shown] == case.ctxmodes_value
    assert origins[case.shown] == str(user_dir / "config.toml")


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("where", ["global", "project"])
def test_a_value_of_the_wrong_type_is_one_line_naming_the_file_and_key(
    case, where, project, user_dir, agent_dir
):
    directory = agent_dir if where == "global" else project / ".pi"
    path = _write(directory, _pi(case.pi_key, case.wrong))
    # Even under a value of ctxmodes' own: the user's Pi file is wrong, and Pi's key says so.
    (user_dir / "config.toml").write_text(case.ctxmodes_toml + "\n")
    with pytest.raises(ConfigError) as raised:
        _shown(project, user_dir)
    assert str(raised.value) == f"{path}: {case.pi_key}: {case.wrong_words}"


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"retry": True}, "retry: expected an object, got a boolean (true)"),
        ({"retry": {"provider": 5}}, "retry.provider: expected an object, got a number (5)"),
        ({"compaction": "off"}, 'compaction: expected an object, got a string ("off")'),
        ({"defaultModel": 5}, "defaultModel: expected a string, got a number (5)"),
        (
            {"enabledModels": ["sonnet", None]},
            "enabledModels: expected an array of strings, got null in it",
        ),
    ],
)
def test_a_table_or_model_of_the_wrong_type_names_its_key(
    values, words, project, user_dir, agent_dir
):
    path = _write(agent_dir, values)
    with pytest.raises(ConfigError) as raised:
        _shown(project, user_dir)
    assert str(raised.value) == f"{path}: {words}"


@pytest.mark.parametrize(
    ("pi_key", "value", "words"),
    [
        ("retry.maxRetries", -1, "retry.maxRetries: Input should be greater than or equal to 0"),
        ("retry.provider.timeoutMs", 0, "retry.provider.timeoutMs: Input should be greater than 0"),
        (
            "compaction.reserveTokens",
            -5,
            "compaction.reserveTokens: Input should be greater than or equal to 0",
        ),
    ],
)
def test_a_value_ctxmodes_refuses_names_the_file_and_pis_key(
    pi_key, value, words, project, user_dir, agent_dir
):
    path = _write(agent_dir, _pi(pi_key, value))
    with pytest.raises(ConfigError) as raised:
        _shown(project, user_dir)
    assert str(raised.value) == f"{path} (Pi's {pi_key}): {words}"


@pytest.mark.parametrize("level", ["extreme", "HIGH", ""])
def test_a_thinking_level_pi_does_not_know_starts_sessions_at_off_as_in_pi(
    level, project, user_dir, agent_dir
):
    """Pi clamps a level it does not know to the model's lowest supported one: ``off``."""
    path = _write(agent_dir, {"defaultThinkingLevel": level})
    (user_dir / "config.toml").write_text('thinking_level = "high"\n')
    values, origins = _shown(project, user_dir)
    assert values["thinking_level"] == "high"  # ctxmodes' own still wins
    (user_dir / "config.toml").unlink()
    values, origins = _shown(project, user_dir)
    assert values["thinking_level"] == "off"
    assert origins["thinking_level"].startswith(f"{path} (Pi's defaultThinkingLevel ")
    assert json.dumps(level) in origins["thinking_level"]


@pytest.mark.parametrize("key", ["steeringMode", "followUpMode"])
def test_a_delivery_mode_other_than_all_is_one_at_a_time_as_in_pi(
    key, project, user_dir, agent_dir
):
    _write(agent_dir, {key: "batch"})
    values, origins = _shown(project, user_dir)
    shown = "steering_mode" if key == "steeringMode" else "follow_up_mode"
    assert values[shown] == "one-at-a-time"
    assert '"batch"' in origins[shown]


def test_a_tree_filter_pi_does_not_know_is_the_default_as_in_pi(project, user_dir, agent_dir):
    _write(agent_dir, {"treeFilterMode": "tools-only"})
    values, origins = _shown(project, user_dir)
    assert values["terminal.tree_filter"] == "default"
    assert '"tools-only"' in origins["terminal.tree_filter"]


def test_a_double_escape_action_pi_does_not_know_is_fork_as_in_pi(project, user_dir, agent_dir):
    # Pi's Esc Esc opens the tree for "tree", does nothing for "none", and forks otherwise.
    path = _write(agent_dir, {"doubleEscapeAction": "label"})
    values, origins = _shown(project, user_dir)
    assert values["terminal.double_escape_action"] == "fork"
    assert origins["terminal.double_escape_action"] == (
        f'{path} (Pi\'s doubleEscapeAction "label": fork, as in Pi)'
    )
    _write(agent_dir, {"doubleEscapeAction": None})
    values, _ = _shown(project, user_dir)
    assert values["terminal.double_escape_action"] == "tree"


def test_a_blank_external_editor_is_none_over_a_lower_files_as_in_pi(project, user_dir, agent_dir):
    _write(agent_dir, {"externalEditor": "vim"})
    path = _write(project / ".pi", {"externalEditor": "  "})
    values, origins = _shown(project, user_dir)
    assert values["terminal.external_editor"] is None
    assert origins["terminal.external_editor"].startswith(f"{path} (Pi's externalEditor")


@pytest.mark.parametrize(("rows", "shown"), [(1, 3), (0, 3), (50, 20)])
def test_completion_rows_keep_pis_bounds(rows, shown, project, user_dir, agent_dir):
    """Pi's editor keeps its menu between 3 and 20 rows whatever the setting says."""
    _write(agent_dir, {"autocompleteMaxVisible": rows})
    values, origins = _shown(project, user_dir)
    assert values["terminal.completion_rows"] == shown
    assert origins["terminal.completion_rows"].endswith(
        f"(Pi's autocompleteMaxVisible {rows}: {shown}, as in Pi)"
    )


#: (global file, project file, the keys ``config show`` prints that the project's null
#: takes back to ctxmodes' default, a key the global file still gives).
PROJECT_NULLS = [
    pytest.param({"defaultThinkingLevel": "high"}, {"defaultThinkingLevel": None},
                 ["thinking_level"], None, id="top-level scalar"),
    pytest.param({"retry": {"maxRetries": 5, "baseDelayMs": 500}}, {"retry": {"maxRetries": None}},
                 ["retry.max_retries"], "retry.base_delay_ms", id="nested scalar"),
    pytest.param({"retry": {"enabled": False, "provider": {"maxRetries": 2}}, "quietStartup": True},
                 {"retry": None}, ["retry.enabled", "retry.provider.max_retries"],
                 "terminal.quiet_startup", id="whole table"),
    pytest.param({"retry": {"provider": {"timeoutMs": 7000}}}, {"retry": {"provider": None}},
                 ["retry.provider.timeout_ms"], None, id="whole nested table"),
    pytest.param({"thinkingBudgets": {"low": 100, "high": 9000}}, {"thinkingBudgets": None},
                 ["thinking_budgets.low", "thinking_budgets.high"], None, id="budgets"),
    pytest.param({"queueMode": "all"}, {"steeringMode": None}, ["steering_mode"], None,
                 id="legacy queueMode"),
    pytest.param({"retry": {"maxDelayMs": 9000}},
                 {"retry": {"provider": {"maxRetryDelayMs": None}}},
                 ["retry.provider.max_retry_delay_ms"], None, id="legacy retry.maxDelayMs"),
    pytest.param({"enableSkillCommands": False}, {"skills": {"enableSkillCommands": None}},
                 ["terminal.skill_commands"], None, id="legacy skills.enableSkillCommands"),
    pytest.param({"defaultProvider": "local", "defaultModel": "m"}, {"defaultModel": None},
                 ["model"], None, id="model"),
    pytest.param({"doubleEscapeAction": "none", "treeFilterMode": "all"},
                 {"doubleEscapeAction": None}, ["terminal.double_escape_action"],
                 "terminal.tree_filter", id="doubleEscapeAction"),
    pytest.param({"enabledModels": ["local/*"]}, {"enabledModels": None}, ["enabled_models"],
                 None, id="list"),
]  # fmt: skip


@pytest.mark.parametrize(("global_values", "project_values", "undone", "kept"), PROJECT_NULLS)
def test_a_projects_null_replaces_the_global_value_as_in_pi(
    global_values, project_values, undone, kept, project, clone, user_dir, agent_dir
):
    """Pi lays the project's object over the global one: a ``null`` replaces the global
    value as any value does, and Pi's default then applies; ctxmodes' default stands in."""
    defaults, _ = _shown(project, user_dir)
    global_path = _write(agent_dir, global_values)
    for directory in (project, clone):
        _write(directory / ".pi", project_values)
    values, origins = _shown(project, user_dir)
    for key in undone:
        assert (values[key], origins[key]) == (defaults[key], DEFAULT_SOURCE), key
    if kept is not None:
        assert values[kept] != defaults[kept]
        assert origins[kept].startswith(f"{global_path} (Pi's ")
    # An untrusted project's file is not read: the global value stands.
    values, origins = _shown(clone, user_dir)
    for key in undone:
        assert origins[key].startswith(f"{global_path} (Pi's "), key


def test_a_projects_null_leaves_ctxmodes_own_value_in_force(project, user_dir, agent_dir):
    _write(agent_dir, {"retry": {"maxRetries": 5}})
    _write(project / ".pi", {"retry": None})
    (user_dir / "config.toml").write_text("[retry]\nmax_retries = 1\n")
    values, origins = _shown(project, user_dir)
    assert (values["retry.max_retries"], origins["retry.max_retries"]) == (
        1,
        str(user_dir / "config.toml"),
    )


def test_a_projects_table_merges_with_the_global_one_each_migrated_first(
    project, user_dir, agent_dir
):
    """The global ``retry.provider`` is replaced by the project's (merged, both objects),
    and a legacy key is migrated in its own file before the merge: the project's
    ``retry.maxDelayMs`` is its ``retry.provider.maxRetryDelayMs``."""
    global_path = _write(
        agent_dir, {"retry": {"maxRetries": 5, "provider": {"maxRetries": 2, "timeoutMs": 900}}}
    )
    project_path = _write(
        project / ".pi",
        {"retry": {"provider": {"maxRetries": None}, "maxDelayMs": 4000}},
    )
    values, origins = _shown(project, user_dir)
    assert values["retry.max_retries"] == 5
    assert origins["retry.max_retries"] == f"{global_path} (Pi's retry.maxRetries)"
    assert origins["retry.provider.max_retries"] == DEFAULT_SOURCE
    assert values["retry.provider.timeout_ms"] == 900
    assert values["retry.provider.max_retry_delay_ms"] == 4000
    assert origins["retry.provider.max_retry_delay_ms"] == (
        f"{project_path} (Pi's retry.maxDelayMs)"
    )


def test_a_projects_null_takes_back_one_models_thinking_level_or_all(project, user_dir, agent_dir):
    _write(agent_dir, {"modelThinkingLevels": {"a/x": "high", "a/y": "low"}})
    _write(project / ".pi", {"modelThinkingLevels": {"a/x": None}})
    loaded = load_settings(cwd=project, environ={"CTXMODES_CONFIG_DIR": str(user_dir)})
    assert loaded.settings.model_thinking_levels == {"a/y": "low"}
    _write(project / ".pi", {"modelThinkingLevels": None})
    loaded = load_settings(cwd=project, environ={"CTXMODES_CONFIG_DIR": str(user_dir)})
    assert loaded.settings.model_thinking_levels == {}


def test_a_global_value_of_the_wrong_type_is_an_error_though_a_project_replaces_it(
    project, user_dir, agent_dir
):
    """Pi would never look at it; ctxmodes still says so, as the file is wrong wherever the
    project does not replace it."""
    path = _write(agent_dir, {"retry": {"maxRetries": "5"}})
    _write(project / ".pi", {"retry": None})
    with pytest.raises(ConfigError) as raised:
        _shown(project, user_dir)
    assert str(raised.value) == f'{path}: retry.maxRetries: expected a number, got a string ("5")'


def test_pis_legacy_keys_count_as_pi_migrates_them(project, user_dir, agent_dir):
    path = _write(agent_dir, {"queueMode": "all", "retry": {"maxDelayMs": 9000}})
    values, origins = _shown(project, user_dir)
    assert values["steering_mode"] == "all"
    assert origins["steering_mode"] == f"{path} (Pi's queueMode)"
    # Pi moved retry.maxDelayMs to the request's cap, not ctxmodes' own retry.max_delay_ms.
    assert values["retry.provider.max_retry_delay_ms"] == 9000
    assert origins["retry.max_delay_ms"] == DEFAULT_SOURCE
    # The current key wins in the same file.
    _write(agent_dir, {"queueMode": "all", "steeringMode": "one-at-a-time"})
    assert _shown(project, user_dir)[0]["steering_mode"] == "one-at-a-time"


def test_nested_pi_objects_merge_key_by_key(project, user_dir, agent_dir):
    """As Pi's own example: the project's ``compaction.reserveTokens`` leaves the global
    ``compaction.enabled`` in force."""
    _write(agent_dir, {"compaction": {"enabled": False, "reserveTokens": 16384}})
    _write(project / ".pi", {"compaction": {"reserveTokens": 8192}})
    values, origins = _shown(project, user_dir)
    assert (values["compaction.enabled"], values["compaction.reserve_tokens"]) == (False, 8192)
    assert origins["compaction.enabled"].startswith(str(agent_dir))
    assert origins["compaction.reserve_tokens"].startswith(str(project))


@pytest.mark.parametrize(
    ("value", "timeout"),
    [
        (120000, 120000),
        (90000.7, 90000),
        ("60000", 60000),
        (" 0x10 ", 16),
        ("6e4", 60000),
        (0, 2**31 - 1),
        ("disabled", 2**31 - 1),
    ],
)
def test_pis_http_idle_timeout_is_the_request_timeout(
    value, timeout, project, clone, user_dir, agent_dir
):
    """As Pi: the request's timeout unless ``retry.provider.timeoutMs`` is set, in either file;
    ``0`` or ``"disabled"`` is none (Pi passes the longest 32-bit delay)."""
    path = _write(agent_dir, {"httpIdleTimeoutMs": value})
    values, origins = _shown(project, user_dir)
    assert values["retry.provider.timeout_ms"] == timeout
    assert origins["retry.provider.timeout_ms"].startswith(f"{path} (Pi's httpIdleTimeoutMs")
    # A project's, trusted, wins; an untrusted one's is not read.
    for directory in (project, clone):
        _write(directory / ".pi", {"httpIdleTimeoutMs": 5000})
    assert _shown(project, user_dir)[0]["retry.provider.timeout_ms"] == 5000
    assert _shown(clone, user_dir)[0]["retry.provider.timeout_ms"] == timeout
    # retry.provider.timeoutMs wins over it, even from the global file.
    _write(agent_dir, {"httpIdleTimeoutMs": value, "retry": {"provider": {"timeoutMs": 7000}}})
    assert _shown(project, user_dir)[0]["retry.provider.timeout_ms"] == 7000
    # And ctxmodes' own configuration over both.
    (user_dir / "config.toml").write_text("[retry.provider]\ntimeout_ms = 1000\n")
    assert _shown(project, user_dir)[0]["retry.provider.timeout_ms"] == 1000


def test_a_null_http_idle_timeout_in_force_is_refused_as_pi_refuses_it(
    project, clone, user_dir, agent_dir
):
    """Pi stops at startup on a merged ``httpIdleTimeoutMs`` of ``null``, a project's over a
    global value too; a global ``null`` a project's value replaces is never read."""
    _write(agent_dir, {"httpIdleTimeoutMs": 5000})
    for directory in (project, clone):
        _write(directory / ".pi", {"httpIdleTimeoutMs": None})
    with pytest.raises(ConfigError) as raised:
        _shown(project, user_dir)
    expected = 'httpIdleTimeoutMs: expected milliseconds (0 or "disabled" for none), got null'
    assert str(raised.value) == f"{project / '.pi' / 'settings.json'}: {expected}"
    assert _shown(clone, user_dir)[0]["retry.provider.timeout_ms"] == 5000  # not read
    _write(agent_dir, {"httpIdleTimeoutMs": None})
    _write(project / ".pi", {"httpIdleTimeoutMs": 5000})
    assert _shown(project, user_dir)[0]["retry.provider.timeout_ms"] == 5000
    with pytest.raises(ConfigError, match="got null"):
        _shown(clone, user_dir)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (-1, "a number (-1)"),
        ("soon", 'a string ("soon")'),
        ("1_000", 'a string ("1_000")'),
        ("Infinity", 'a string ("Infinity")'),
        ("", 'a string ("")'),
        (" ", 'a string (" ")'),
        (None, "null"),
        (True, "a boolean (true)"),
        ([1], "an array"),
    ],
)
def test_an_http_idle_timeout_pi_refuses_is_one_line(value, words, project, user_dir, agent_dir):
    path = _write(agent_dir, {"httpIdleTimeoutMs": value})
    with pytest.raises(ConfigError) as raised:
        _shown(project, user_dir)
    expected = 'expected milliseconds (0 or "disabled" for none), got '
    assert str(raised.value) == f"{path}: httpIdleTimeoutMs: {expected}{words}"


def test_pis_per_model_thinking_levels_merge_model_by_model(project, user_dir, agent_dir):
    _write(agent_dir, {"modelThinkingLevels": {"a/x": "high", "a/y.5": "low", "a/z": "loud"}})
    _write(project / ".pi", {"modelThinkingLevels": {"a/y.5": "minimal"}})
    loaded = load_settings(cwd=project, environ={"CTXMODES_CONFIG_DIR": str(user_dir)})
    # A level Pi does not know is off, as Pi clamps it; a dot in a model id is no table.
    assert loaded.settings.model_thinking_levels == {
        "a/x": "high",
        "a/y.5": "minimal",
        "a/z": "off",
    }
    (user_dir / "config.toml").write_text('[model_thinking_levels]\n"a/x" = "xhigh"\n')
    loaded = load_settings(cwd=project, environ={"CTXMODES_CONFIG_DIR": str(user_dir)})
    assert loaded.settings.model_thinking_levels["a/x"] == "xhigh"  # ctxmodes' own wins


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("high", 'expected an object of levels by "provider/model-id", got a string ("high")'),
        ({"a/x": 2}, '"a/x": expected a thinking level, got a number (2)'),
    ],
)
def test_per_model_thinking_levels_of_the_wrong_type_are_one_line(
    value, words, project, user_dir, agent_dir
):
    path = _write(agent_dir, {"modelThinkingLevels": value})
    with pytest.raises(ConfigError) as raised:
        _shown(project, user_dir)
    assert str(raised.value) == f"{path}: modelThinkingLevels: {words}"


def test_pis_http_proxy_comes_from_the_global_file_and_yields_to_the_environment(
    project: Path, agent_dir: Path
) -> None:
    from ctxmodes.pi_settings import apply_http_proxy

    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text(json.dumps({"httpProxy": "http://project:1"}))
    environ: dict[str, str] = {}
    apply_http_proxy(environ)
    assert environ == {}  # a project's file is not read for it, as in Pi
    (agent_dir / "settings.json").write_text(json.dumps({"httpProxy": " http://proxy:3128 "}))
    environ = {"HTTPS_PROXY": ""}
    apply_http_proxy(environ)
    assert environ == {"HTTP_PROXY": "http://proxy:3128", "HTTPS_PROXY": ""}
    (agent_dir / "settings.json").write_text(json.dumps({"httpProxy": 3128}))
    with pytest.raises(ConfigError, match="httpProxy"):
        apply_http_proxy({})
