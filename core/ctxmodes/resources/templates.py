"""Prompt templates: ``/name args`` expanded from a Markdown file of
``<agent dir>/prompts/`` or (trusted projects) ``.pi/prompts/``, with Pi's placeholders:
``$1``…, ``$@`` and ``$ARGUMENTS``, ``${N:-default}``, ``${@:-default}``, ``${@:N}``,
``${@:N:L}``. Arguments are split as a shell splits words in quotes."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ctxmodes.resources.discovery import IgnoreRules, entries, relative_posix
from ctxmodes.resources.sources import ResourceSource
from ctxmodes.resources.text import parse_frontmatter, read_text

_PLACEHOLDER = re.compile(
    r"\$\{(\d+|ARGUMENTS|@):-([^}]*)\}|\$\{@:(\d+)(?::(\d+))?\}|\$(ARGUMENTS|@|\d+)"
)
_INVOCATION = re.compile(r"^/(\S+)(?:\s+([\s\S]*))?$")
_DESCRIPTION_LIMIT = 60


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    name: str
    description: str
    content: str
    file_path: str
    argument_hint: str | None = None
    #: Where it was found (set by the loader).
    source: ResourceSource | None = None


def parse_command_args(text: str) -> list[str]:
    """Words of ``text``; single or double quotes keep spaces inside a word."""
    args: list[str] = []
    current, quote = "", None
    for char in text:
        if quote is not None:
            if char == quote:
                quote = None
            else:
                current += char
        elif char in "\"'":
            quote = char
        elif char.isspace():
            if current:
                args.append(current)
                current = ""
        else:
            current += char
    if current:
        args.append(current)
    return args


def substitute_args(content: str, args: Sequence[str]) -> str:
    """The template with its placeholders filled (values are not substituted again)."""
    every = " ".join(args)

    def fill(match: re.Match[str]) -> str:
        target, default, start, length, simple = match.groups()
        if target is not None:
            value = every if target in ("@", "ARGUMENTS") else _nth(args, int(target))
            return value or default
        if start is not None:
            first = max(int(start) - 1, 0)
            chosen = args[first:] if length is None else args[first : first + int(length)]
            return " ".join(chosen)
        if simple in ("@", "ARGUMENTS"):
            return every
        return _nth(args, int(simple))

    return _PLACEHOLDER.sub(fill, content)


def _nth(args: Sequence[str], position: int) -> str:
    return args[position - 1] if 0 < position <= len(args) else ""


def expand_template(text: str, templates: Sequence[PromptTemplate]) -> str:
    """``text`` with a leading ``/name`` of a known template expanded; otherwise unchanged."""
    if not text.startswith("/"):
        return text
    match = _INVOCATION.match(text)
    if match is None:
        return text
    template = next((t for t in templates if t.name == match.group(1)), None)
    if template is None:
        return text
    return substitute_args(template.content, parse_command_args(match.group(2) or ""))


def template_files(directory: str) -> list[str]:
    """The ``.md`` files directly inside ``directory``, as Pi finds them."""
    if not os.path.exists(directory):
        return []
    rules = IgnoreRules(directory)
    rules.add_folder(directory)
    found: list[str] = []
    for entry in entries(directory):
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        if rules.ignores(relative_posix(entry.path, directory)):
            continue
        if entry.is_file and entry.name.endswith(".md"):
            found.append(entry.path)
    return found


def markdown_files_under(directory: str) -> list[str]:
    """Every ``.md`` file under ``directory``, as Pi reads a folder named in the ``prompts``
    setting: subfolders searched, dot files and ``node_modules`` skipped, ignore files
    honoured."""
    return _markdown_files_under(directory, IgnoreRules(directory))


def _markdown_files_under(directory: str, rules: IgnoreRules) -> list[str]:
    rules.add_folder(directory)
    found: list[str] = []
    for entry in entries(directory):
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        relative = relative_posix(entry.path, rules.root)
        if rules.ignores(relative + "/" if entry.is_dir else relative):
            continue
        if entry.is_dir:
            found.extend(_markdown_files_under(entry.path, rules))
        elif entry.is_file and entry.name.endswith(".md"):
            found.append(entry.path)
    return found


def markdown_files_in(directory: str) -> list[str]:
    """The ``.md`` files directly inside ``directory``, as Pi reads a folder given by
    ``--prompt-template``: every one, dot files included, ignore files not read."""
    return [e.path for e in entries(directory) if e.is_file and e.name.endswith(".md")]


def load_template(path: str) -> PromptTemplate | None:
    try:
        front, body = parse_frontmatter(read_text(path))
    except Exception:
        return None
    description = front.get("description") or ""
    if not description:
        first = next((line for line in body.split("\n") if line.strip()), None)
        if first is not None:
            description = first[:_DESCRIPTION_LIMIT] + (
                "..." if len(first) > _DESCRIPTION_LIMIT else ""
            )
    hint = front.get("argument-hint")
    return PromptTemplate(
        name=os.path.basename(path).removesuffix(".md"),
        description=str(description),
        content=body,
        file_path=path,
        argument_hint=str(hint) if hint else None,
    )


def load_templates(paths: Sequence[str]) -> tuple[list[PromptTemplate], list[str]]:
    """The templates of ``paths`` (first of a name wins) and a warning per name collision."""
    chosen: dict[str, PromptTemplate] = {}
    warnings: list[str] = []
    for path in paths:
        template = load_template(path)
        if template is None:
            continue
        existing = chosen.get(template.name)
        if existing is not None:
            warnings.append(
                f'prompt template "/{template.name}" in {path} is shadowed by {existing.file_path}'
            )
            continue
        chosen[template.name] = template
    return list(chosen.values()), warnings
