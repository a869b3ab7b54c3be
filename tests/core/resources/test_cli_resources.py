"""Context files, system prompt files, templates, skills and project trust in ``ctxmodes run``
(a real process; what reaches the model is read from ``--trace``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_process import run_cli

# Each test runs ctxmodes in a process of its own.
pytestmark = pytest.mark.slow

ANSWER = {"responses": [{"text": "ok"}, {"text": "ok"}]}


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def cloned(tmp_path: Path) -> Path:
    """A project as a cloned repository brings it: rules for the agent, and .pi files that
    would replace the system prompt and add a template and a skill."""
    write(tmp_path / "agent" / "AGENTS.md", "GLOBAL-RULES")
    project = tmp_path / "clone"
    write(project / "AGENTS.md", "PROJECT-RULES")
    write(project / ".pi" / "SYSTEM.md", "PROJECT-SYSTEM-PROMPT")
    write(project / ".pi" / "APPEND_SYSTEM.md", "PROJECT-APPENDIX")
    write(project / ".pi" / "prompts" / "fix.md", "Fix issue $1 carefully")
    skill = "---\ndescription: PROJECT-SKILL\n---\nSKILL-BODY\n"
    write(project / ".pi" / "skills" / "deploy" / "SKILL.md", skill)
    (tmp_path / "home").mkdir()
    return project


def run(tmp_path: Path, project: Path, *args: str) -> tuple[dict, str]:
    requests, stderr = run_all(tmp_path, project, *args)
    return requests[0], stderr


def run_all(tmp_path: Path, project: Path, *args: str) -> tuple[list[dict], str]:
    trace = tmp_path / "trace.jsonl"
    trace.unlink(missing_ok=True)
    result = run_cli(
        tmp_path,
        ANSWER,
        "--cwd",
        str(project),
        "--trace",
        str(trace),
        *args,
        env={"HOME": str(tmp_path / "home")},
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in trace.read_text().splitlines()], result.stderr


def user_text(request: dict) -> str:
    return request["messages"][-1]["content"][0]["text"]


def test_untrusted_clone_gets_its_rules_read_but_cannot_change_the_prompt(
    tmp_path: Path, cloned: Path
) -> None:
    request, stderr = run(tmp_path, cloned, "/fix 42")
    system = request["system_prompt"]
    assert "GLOBAL-RULES" in system
    assert "PROJECT-RULES" in system
    assert system.index("GLOBAL-RULES") < system.index("PROJECT-RULES")
    for project_only in ("PROJECT-SYSTEM-PROMPT", "PROJECT-APPENDIX", "PROJECT-SKILL"):
        assert project_only not in system
    assert user_text(request) == "/fix 42"
    assert "not trusted" in stderr
    assert "--approve" in stderr
    assert not (tmp_path / "agent" / "trust.json").exists()


def test_approve_loads_the_project_files_for_one_run(tmp_path: Path, cloned: Path) -> None:
    requests, stderr = run_all(tmp_path, cloned, "--approve", "/fix 42", "/skill:deploy now")
    request = requests[0]
    system = request["system_prompt"]
    assert system.startswith("PROJECT-SYSTEM-PROMPT\n\nPROJECT-APPENDIX\n\n<project_context>")
    assert "<name>deploy</name>" in system
    assert user_text(request) == "Fix issue 42 carefully"
    skill_file = cloned / ".pi" / "skills" / "deploy" / "SKILL.md"
    assert user_text(requests[1]) == (
        f'<skill name="deploy" location="{skill_file}">\n'
        f"References are relative to {skill_file.parent}.\n\nSKILL-BODY\n</skill>\n\nnow"
    )
    assert "not trusted" not in stderr
    assert not (tmp_path / "agent" / "trust.json").exists()


def test_saved_trust_of_a_parent_and_no_approve(tmp_path: Path, cloned: Path) -> None:
    write(tmp_path / "agent" / "trust.json", json.dumps({str(tmp_path): True}))
    request, _ = run(tmp_path, cloned, "/fix 7")
    assert request["system_prompt"].startswith("PROJECT-SYSTEM-PROMPT")
    assert user_text(request) == "Fix issue 7 carefully"
    request, _ = run(tmp_path, cloned, "--no-approve", "/fix 7")
    assert "PROJECT-SYSTEM-PROMPT" not in request["system_prompt"]


def test_default_project_trust_setting(tmp_path: Path, cloned: Path) -> None:
    write(tmp_path / "agent" / "settings.json", json.dumps({"defaultProjectTrust": "always"}))
    request, _ = run(tmp_path, cloned, "hello")
    assert request["system_prompt"].startswith("PROJECT-SYSTEM-PROMPT")


def test_no_context_files(tmp_path: Path, cloned: Path) -> None:
    request, _ = run(tmp_path, cloned, "--no-context-files", "hello")
    assert "RULES" not in request["system_prompt"]
    assert "<project_context>" not in request["system_prompt"]


def test_global_templates_expand_without_any_trust(tmp_path: Path, cloned: Path) -> None:
    write(tmp_path / "agent" / "prompts" / "hi.md", "Say hi to ${1:-nobody} and ${@:2}")
    request, _ = run(tmp_path, cloned, "/hi 'Ada L' and Bob")
    assert user_text(request) == "Say hi to Ada L and and Bob"


def test_a_broken_trust_store_leaves_the_project_untrusted(tmp_path: Path, cloned: Path) -> None:
    """Fails closed: a store that cannot be read is not a decision to trust."""
    write(tmp_path / "agent" / "trust.json", "{not json")
    request, stderr = run(tmp_path, cloned, "hi")
    assert "PROJECT-SYSTEM-PROMPT" not in request["system_prompt"]
    warning = next(line for line in stderr.splitlines() if "trust store" in line)
    assert warning.startswith("Warning: ")
    assert "not trusted" in warning
    assert str(tmp_path / "agent" / "trust.json") in warning
    assert "Traceback" not in stderr
    assert (tmp_path / "agent" / "trust.json").read_text() == "{not json"


def test_resource_warnings_are_printed_by_run(tmp_path: Path, cloned: Path) -> None:
    write(tmp_path / "agent" / "skills" / "Bad_Name" / "SKILL.md", "---\ndescription: d\n---\n")
    request, stderr = run(tmp_path, cloned, "hello")
    assert "Warning: " in stderr
    assert "name contains invalid characters" in stderr
    assert "<name>Bad_Name</name>" in request["system_prompt"]  # loaded anyway, as Pi does


def test_skill_and_prompt_template_flags_load_from_where_ctxmodes_started(
    tmp_path: Path, cloned: Path
) -> None:
    # Relative paths are the starting folder's (tmp_path), not --cwd's; --no-skills and
    # --no-prompt-templates leave the ones named on the command line, as in Pi.
    write(tmp_path / "mine" / "ship" / "SKILL.md", "---\ndescription: CLI-SKILL\n---\nSHIP\n")
    write(tmp_path / "mine" / "prompts" / "greet.md", "Greetings, $1")
    write(tmp_path / "agent" / "prompts" / "other.md", "GLOBAL-TEMPLATE")
    requests, stderr = run_all(
        tmp_path,
        cloned,
        "--no-skills",
        "--no-prompt-templates",
        "--skill",
        "mine",
        "--prompt-template",
        "mine/prompts",
        "--skill",
        "mine/nowhere",
        "/greet Ada",
        "/other",
    )
    system = requests[0]["system_prompt"]
    assert "<name>ship</name>" in system
    assert "CLI-SKILL" in system
    assert user_text(requests[0]) == "Greetings, Ada"
    assert user_text(requests[1]) == "/other"
    missing = tmp_path / "mine" / "nowhere"
    assert f"Warning: {missing}: skill path does not exist" in stderr.splitlines()


def test_skills_and_prompts_settings_add_folders(tmp_path: Path, cloned: Path) -> None:
    write(tmp_path / "kept" / "lint" / "SKILL.md", "---\ndescription: KEPT-SKILL\n---\nx\n")
    write(tmp_path / "kept" / "draft" / "SKILL.md", "---\ndescription: DRAFT-SKILL\n---\nx\n")
    write(tmp_path / "kept" / "prompts" / "deep" / "tidy.md", "Tidy $@")
    settings = {"skills": ["../kept", "!draft"], "prompts": ["~/../kept/prompts"]}
    write(tmp_path / "agent" / "settings.json", json.dumps(settings))
    request, _ = run(tmp_path, cloned, "/tidy up")
    assert "KEPT-SKILL" in request["system_prompt"]
    assert "DRAFT-SKILL" not in request["system_prompt"]
    assert user_text(request) == "Tidy up"


def test_a_skills_setting_of_the_wrong_type_is_one_line_naming_file_and_key(
    tmp_path: Path, cloned: Path
) -> None:
    settings = tmp_path / "agent" / "settings.json"
    write(settings, json.dumps({"skills": "../kept"}))
    result = run_cli(
        tmp_path, ANSWER, "--cwd", str(cloned), "hi", env={"HOME": str(tmp_path / "home")}
    )
    assert result.returncode != 0
    assert result.stderr.count("\n") == 1, result.stderr
    assert f"{settings}: skills: expected an array" in result.stderr
