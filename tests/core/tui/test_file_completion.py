"""``@`` completes the project's files, fuzzily, in the editor."""

from __future__ import annotations

import subprocess
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from support.agents import make_agent
from support.terminal import TAB, run_terminal

from ctxmodes.tui.file_completion import FileCompleter, fuzzy_score, project_files


def make_project(root: Path) -> None:
    for name in ("README.md", "src/app/main.py", "src/app/readers.py", "docs/guide.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.txt").write_text("")


def completions(root: Path, text: str) -> list[str]:
    completer = FileCompleter(lambda: root)
    document = Document(text, len(text))
    return [c.text for c in completer.get_completions(document, CompleteEvent())]


def test_outside_git_the_walk_leaves_out_hidden_and_dependency_folders(tmp_path):
    make_project(tmp_path)
    assert sorted(project_files(tmp_path)) == [
        "README.md",
        "docs/guide.md",
        "src/app/main.py",
        "src/app/readers.py",
    ]


def test_in_a_repository_git_decides_and_ignored_files_stay_out(tmp_path):
    make_project(tmp_path)
    (tmp_path / ".gitignore").write_text("docs/\nnode_modules/\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "README.md"], cwd=tmp_path, check=True)
    files = set(project_files(tmp_path))
    assert {"README.md", "src/app/main.py", ".gitignore", ".hidden/secret.txt"} <= files
    assert "docs/guide.md" not in files
    assert not any(name.startswith("node_modules") for name in files)


def test_a_fuzzy_query_ranks_file_names_first(tmp_path):
    make_project(tmp_path)
    assert completions(tmp_path, "look at @rdme")[0] == "@README.md"
    assert completions(tmp_path, "@main")[0] == "@src/app/main.py"
    assert completions(tmp_path, "@read")[:2] == ["@README.md", "@src/app/readers.py"]
    assert completions(tmp_path, "@zzz") == []
    assert completions(tmp_path, "no at sign") == []
    assert fuzzy_score("ap", "src/app/main.py") is not None
    assert fuzzy_score("pa", "ab") is None


def test_tab_completes_a_file_in_the_editor(tmp_path):
    make_project(tmp_path)
    agent = make_agent(tmp_path, [{"text": "ok"}])
    seen: dict[str, str] = {}

    async def scenario(t):
        await t.type("explain @guid")
        await t.type(TAB)
        await t.until(lambda: t.editor.endswith("md"), "the completion")
        seen["editor"] = t.editor

    run_terminal(agent, scenario)
    assert seen["editor"] == "explain @docs/guide.md"
