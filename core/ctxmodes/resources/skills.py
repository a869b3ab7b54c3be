"""Skills (Pi's ``SKILL.md`` format): discovered, listed in the system prompt as Pi lists
them, and expanded by ``/skill:name args``.

Discovery, per skills folder: a folder holding ``SKILL.md`` is one skill and is not searched
further; other folders are searched for one. In ``.pi/skills`` and ``<agent dir>/skills``
the ``.md`` files directly inside are skills too; in ``.agents/skills`` the ``.md`` files of
subfolders are. A skill needs a ``description`` in its front matter; its name is the
front matter's ``name`` or its folder's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from ctxmodes.resources.discovery import IgnoreRules, entries, relative_posix
from ctxmodes.resources.sources import ResourceSource
from ctxmodes.resources.text import parse_frontmatter, read_text

SKILL_FILE = "SKILL.md"
COMMAND_PREFIX = "/skill:"
_MAX_NAME = 64
_MAX_DESCRIPTION = 1024
FolderKind = Literal["pi", "agents"]


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    file_path: str
    base_dir: str
    disable_model_invocation: bool = False
    #: Where it was found (set by the loader).
    source: ResourceSource | None = None


def skill_files(directory: str, kind: FolderKind) -> list[str]:
    """The candidate skill files under a skills folder, in Pi's order."""
    if not os.path.exists(directory):
        return []
    return _collect(directory, kind, IgnoreRules(directory))


def _collect(directory: str, kind: FolderKind, rules: IgnoreRules) -> list[str]:
    rules.add_folder(directory)
    listing = entries(directory)
    for entry in listing:
        if (
            entry.name == SKILL_FILE
            and entry.is_file
            and not rules.ignores(relative_posix(entry.path, rules.root))
        ):
            return [entry.path]
    found: list[str] = []
    at_root = directory == rules.root
    for entry in listing:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        relative = relative_posix(entry.path, rules.root)
        wanted_markdown = (kind == "pi" and at_root) or (kind == "agents" and not at_root)
        if entry.is_file and entry.name.endswith(".md") and wanted_markdown:
            if not rules.ignores(relative):
                found.append(entry.path)
            continue
        if not entry.is_dir or rules.ignores(relative + "/"):
            continue
        found.extend(_collect(entry.path, kind, rules))
    return found


def load_skill(path: str) -> tuple[Skill | None, list[str]]:
    """The skill a file declares (``None`` when it declares none) and warnings about it."""
    declared = os.path.basename(path) == SKILL_FILE
    try:
        front, _body = parse_frontmatter(read_text(path))
    except OSError as exc:
        return None, [f"{path}: {exc.strerror or exc}"]
    except Exception as exc:
        return None, [f"{path}: {exc}"] if declared else []
    description = front.get("description")
    has_description = isinstance(description, str) and description.strip() != ""
    if not declared and not has_description:
        return None, []
    warnings = [f"{path}: {problem}" for problem in _description_problems(description)]
    front_name = front.get("name")
    name = front_name if isinstance(front_name, str) and front_name else _folder_name(path)
    warnings += [f"{path}: {problem}" for problem in _name_problems(name)]
    if not has_description:
        return None, warnings
    assert isinstance(description, str)
    skill = Skill(
        name=name,
        description=description,
        file_path=path,
        base_dir=os.path.dirname(path),
        disable_model_invocation=front.get("disable-model-invocation") is True,
    )
    return skill, warnings


def _folder_name(path: str) -> str:
    return os.path.basename(os.path.dirname(path))


def _name_problems(name: str) -> list[str]:
    problems = []
    if len(name) > _MAX_NAME:
        problems.append(f"name exceeds {_MAX_NAME} characters ({len(name)})")
    if not re.fullmatch(r"[a-z0-9-]+", name):
        problems.append(
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
        )
    if name.startswith("-") or name.endswith("-"):
        problems.append("name must not start or end with a hyphen")
    if "--" in name:
        problems.append("name must not contain consecutive hyphens")
    return problems


def _description_problems(description: object) -> list[str]:
    if not isinstance(description, str) or description.strip() == "":
        return ["description is required"]
    if len(description) > _MAX_DESCRIPTION:
        return [f"description exceeds {_MAX_DESCRIPTION} characters ({len(description)})"]
    return []


def load_skills(paths: Sequence[str]) -> tuple[list[Skill], list[str]]:
    """The skills of ``paths``, each a skill file or a skills folder (the first of a name
    wins; a file reached twice through links counts once) and the warnings, name collisions
    last."""
    chosen: dict[str, Skill] = {}
    real_paths: set[str] = set()
    warnings: list[str] = []
    collisions: list[str] = []
    for path in _each_file(paths, warnings):
        skill, found = load_skill(path)
        warnings += found
        if skill is None:
            continue
        real = os.path.realpath(skill.file_path)
        if real in real_paths:
            continue
        existing = chosen.get(skill.name)
        if existing is not None:
            collisions.append(
                f'skill "{skill.name}" in {skill.file_path} is shadowed by {existing.file_path}'
            )
            continue
        chosen[skill.name] = skill
        real_paths.add(real)
    return list(chosen.values()), warnings + collisions


def _each_file(paths: Sequence[str], warnings: list[str]) -> Iterator[str]:
    """The skill files of ``paths`` in order, adding to ``warnings`` (as each path is
    reached) why a path stands for none."""
    for path in paths:
        files, problems = _files_of(path)
        warnings += problems
        yield from files


def _files_of(path: str) -> tuple[list[str], list[str]]:
    """The skill files ``path`` stands for (a folder is searched as Pi searches
    ``<agent dir>/skills``), and why it stands for none."""
    if not os.path.exists(path):
        return [], [f"{path}: skill path does not exist"]
    if os.path.isdir(path):
        return skill_files(path, "pi"), []
    if os.path.isfile(path) and path.endswith(".md"):
        return [path], []
    return [], [f"{path}: skill path is not a markdown file"]


def format_skills_for_prompt(skills: Sequence[Skill], read_tool: str = "read") -> str:
    """The system prompt's list of skills, in Pi's words and XML (empty without any the
    model may invoke)."""
    visible = [skill for skill in skills if not skill.disable_model_invocation]
    if not visible:
        return ""
    how = (
        "Use the read tool to load a skill's file when the task matches its description."
        if read_tool == "read"
        else "Use bash to load a skill's file when the task matches its description."
    )
    lines = [
        "\n\nThe following skills provide specialized instructions for specific tasks.",
        how,
        "When a skill file references a relative path, resolve it against the skill directory "
        "(parent of SKILL.md / dirname of the path) and use that absolute path in tool "
        "commands.",
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines += [
            "  <skill>",
            f"    <name>{_escape(skill.name)}</name>",
            f"    <description>{_escape(skill.description)}</description>",
            f"    <location>{_escape(skill.file_path)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def expand_skill_command(text: str, skills: Sequence[Skill]) -> str:
    """``/skill:name args`` as the skill's instructions (then the arguments); other text,
    an unknown skill or an unreadable file leave ``text`` unchanged."""
    if not text.startswith(COMMAND_PREFIX):
        return text
    space = text.find(" ")
    name = text[len(COMMAND_PREFIX) :] if space == -1 else text[len(COMMAND_PREFIX) : space]
    args = "" if space == -1 else text[space + 1 :].strip()
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return text
    try:
        _front, body = parse_frontmatter(read_text(skill.file_path))
    except Exception:
        return text
    block = (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body.strip()}\n</skill>"
    )
    return f"{block}\n\n{args}" if args else block


#: A prompt a skill command became (Pi's ``parseSkillBlock``): the skill's block, then what
#: was typed after the command.
_SKILL_BLOCK = re.compile(
    r'<skill name="([^"]+)" location="([^"]+)">\n(.*?)\n</skill>(?:\n\n(.+))?', re.DOTALL
)


@dataclass(frozen=True, slots=True)
class SkillBlock:
    """A skill command's prompt, taken apart: the skill, its content, and the message typed
    after the command (``None``: only the command was typed)."""

    name: str
    location: str
    content: str
    user_message: str | None


def parse_skill_block(text: str) -> SkillBlock | None:
    """``text`` taken apart as :func:`expand_skill_command` makes a prompt, as Pi takes it
    apart to show it; ``None`` for any other prompt."""
    match = _SKILL_BLOCK.fullmatch(text)
    if match is None:
        return None
    name, location, content, typed = match.groups()
    return SkillBlock(name, location, content, (typed or "").strip() or None)
