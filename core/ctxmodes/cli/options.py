"""Options shared by several sub-commands."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxmodes.config import Settings
    from ctxmodes.resources import ResourceLoader
    from ctxmodes.resources.trust import AskTrust


def add_mode_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mode",
        metavar="NAME",
        help="context-management mode (overrides configuration and CTXMODES_MODE)",
    )


def cli_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings a command's flags override, as dotted keys."""
    return {"mode": getattr(args, "mode", None), "model": getattr(args, "model", None)}


def agent_settings(args: argparse.Namespace) -> tuple[Path, Settings]:
    """The working directory (``--cwd`` or the current one) and the effective settings of a
    command that runs the agent, which needs a model.

    :raises CtxmodesError: the directory does not exist, or no model is configured.
    """
    from ctxmodes.config import load_settings
    from ctxmodes.errors import CtxmodesError

    cwd = (args.cwd if args.cwd is not None else Path.cwd()).resolve()
    if not cwd.is_dir():
        raise CtxmodesError(f"no such directory: {cwd}")
    settings = load_settings(cwd=cwd, cli=cli_overrides(args)).settings
    if not settings.model:
        raise CtxmodesError("no model configured: pass --model scripted:FILE or set CTXMODES_MODEL")
    return cwd, settings


def add_resource_options(parser: argparse.ArgumentParser) -> None:
    """Pi's flags for context files, templates, skills and project trust."""
    parser.add_argument(
        "-nc",
        "--no-context-files",
        dest="context_files",
        action="store_false",
        help="load no AGENTS.md or CLAUDE.md files",
    )
    parser.add_argument(
        "-ns", "--no-skills", dest="skills", action="store_false", help="load no skills"
    )
    parser.add_argument(
        "-np",
        "--no-prompt-templates",
        dest="prompt_templates",
        action="store_false",
        help="load no prompt templates",
    )
    trust = parser.add_mutually_exclusive_group()
    trust.add_argument(
        "-a",
        "--approve",
        dest="approve",
        action="store_const",
        const=True,
        help="trust the project's own .pi files (system prompt, templates, skills) for this run",
    )
    trust.add_argument(
        "-na",
        "--no-approve",
        dest="approve",
        action="store_const",
        const=False,
        help="ignore the project's own .pi files for this run",
    )


def resource_loader(args: argparse.Namespace, ask: AskTrust | None = None) -> ResourceLoader:
    """The resource loader for a command's flags; ``ask`` asks the user about trust."""
    from ctxmodes.resources import ResourceFlags, default_loader

    flags = ResourceFlags(
        context_files=getattr(args, "context_files", True),
        skills=getattr(args, "skills", True),
        prompt_templates=getattr(args, "prompt_templates", True),
    )
    return default_loader(approve=getattr(args, "approve", None), flags=flags, ask=ask)
