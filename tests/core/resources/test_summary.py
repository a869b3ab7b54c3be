"""The start-up header's list of loaded resources."""

from __future__ import annotations

from pathlib import Path

from ctxmodes.resources import load_resources
from ctxmodes.resources.summary import loaded_sections


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_sections_name_what_was_loaded(tmp_path: Path) -> None:
    home = tmp_path / "home"
    agent = home / ".pi" / "agent"
    project = home / "work" / "app"
    write(agent / "AGENTS.md", "global")
    write(agent / "APPEND_SYSTEM.md", "more")
    write(project / "AGENTS.md", "project")
    write(agent / "prompts" / "review.md", "Review $@")
    write(agent / "prompts" / "fix.md", "Fix $1")
    write(agent / "skills" / "zeta" / "SKILL.md", "---\ndescription: z\n---\n")
    write(agent / "skills" / "alpha" / "SKILL.md", "---\ndescription: a\n---\n")
    loaded = load_resources(project, agent, trusted=True, home=home)
    assert loaded_sections(loaded, project, home) == [
        ("Context", "~/.pi/agent/APPEND_SYSTEM.md, ~/.pi/agent/AGENTS.md, AGENTS.md"),
        ("Skills", "alpha, zeta"),
        ("Prompts", "/fix, /review"),
    ]


def test_an_untrusted_project_says_what_was_left_out(tmp_path: Path) -> None:
    project = tmp_path / "clone"
    write(project / ".pi" / "prompts" / "x.md", "x")
    loaded = load_resources(project, tmp_path / "agent", trusted=False, home=tmp_path)
    ((title, line),) = loaded_sections(loaded, project, tmp_path)
    assert title == "Project"
    assert "not trusted" in line
    assert str(project) in line


def test_nothing_loaded_lists_nothing(tmp_path: Path) -> None:
    loaded = load_resources(tmp_path, tmp_path / "agent", trusted=True, home=tmp_path)
    assert loaded_sections(loaded, tmp_path, tmp_path) == []


def test_an_unreadable_system_prompt_file_is_left_out_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "agent" / "SYSTEM.md").mkdir(parents=True)
    loaded = load_resources(tmp_path, tmp_path / "agent", trusted=True, home=tmp_path)
    assert loaded.system_prompt is None
    assert loaded.system_prompt_path is None
    ((title, line),) = loaded_sections(loaded, tmp_path, tmp_path)
    assert title == "Resource warnings"
    assert "SYSTEM.md" in line


def test_extra_skills_and_templates_are_listed_and_a_missing_one_is_a_warning(
    tmp_path: Path,
) -> None:
    from ctxmodes.resources import ResourceFlags

    agent = tmp_path / "agent"
    write(tmp_path / "kept" / "lint" / "SKILL.md", "---\ndescription: l\n---\n")
    write(tmp_path / "kept" / "tidy.md", "Tidy $@")
    write(agent / "settings.json", '{"skills": ["../kept"], "prompts": ["../kept/tidy.md"]}')
    flags = ResourceFlags(
        skill_paths=(str(tmp_path / "gone"),), prompt_template_paths=(str(tmp_path / "no.md"),)
    )
    loaded = load_resources(tmp_path, agent, trusted=True, flags=flags, home=tmp_path)
    assert loaded_sections(loaded, tmp_path, tmp_path) == [
        ("Skills", "lint"),
        ("Prompts", "/tidy"),
        (
            "Resource warnings",
            f"{tmp_path / 'no.md'}: Prompt template path does not exist; "
            f"{tmp_path / 'gone'}: skill path does not exist",
        ),
    ]
