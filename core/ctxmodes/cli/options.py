"""Options shared by several sub-commands."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ctxmodes.config import LoadedSettings, Settings
    from ctxmodes.config_sources import StartupSettings
    from ctxmodes.host.runtime import AgentHost
    from ctxmodes.providers.base import ModelInfo
    from ctxmodes.providers.registry import ProviderRegistry
    from ctxmodes.resources import ResourceLoader
    from ctxmodes.resources.trust import AskTrust, TrustResolver
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.session_mode import ModeRequest
    from ctxmodes.tools.selection import ToolSelection
    from ctxmodes.tui.saved_defaults import SavedDefaults

#: How the command line confirms a change of a session's recorded mode.
CONFIRM_SWITCH = "pass --switch-mode to switch"


def add_session_choice(parser: argparse.ArgumentParser) -> None:
    """``--session``, ``--fork``, ``-c``, ``-r`` and ``--no-session``: which session the
    interactive session opens (also options of a bare ``ctxmodes``, as of ``pi``)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--session",
        metavar="PATH|ID",
        help="the session to open: a .jsonl file, or a session id or its beginning",
    )
    add_fork_option(where)
    where.add_argument(
        "-c",
        "--continue",
        dest="continue_recent",
        action="store_true",
        help="continue the most recent session of the working directory",
    )
    where.add_argument(
        "-r", "--resume", action="store_true", help="pick a session of the working directory"
    )
    where.add_argument(
        "--no-session",
        dest="no_session",
        action="store_true",
        help="keep the session in memory only: no file is written (as Pi's --no-session)",
    )


def add_fork_option(group: Any, **defaults: Any) -> None:
    """Pi's ``--fork PATH|ID``, in ``group`` (the session choices it excludes)."""
    group.add_argument(
        "--fork",
        metavar="PATH|ID",
        help="copy a session (a .jsonl file, or a session id or its beginning) into a new "
        "session of the working directory and continue there; the source is left as it is",
        **defaults,
    )


def forked_session(
    args: argparse.Namespace, cwd: Path, directory: Path | None, session_id: str | None
) -> Path | None:
    """The new session file ``--fork`` makes (given ``session_id``, when ``--session-id``
    named one), or ``None`` without the flag.

    :raises CtxmodesError: the source matches no session, or several, or is not a session.
    """
    from ctxmodes.cli.session_arg import resolve_session

    source: str | None = getattr(args, "fork", None)
    if source is None:
        return None
    return fork_into(resolve_session(source, cwd, directory), cwd, directory, session_id)


def fork_into(
    source: Path, cwd: Path, directory: Path | None, session_id: str | None = None
) -> Path:
    """The file of a new session of ``cwd`` forked from the session file ``source``.

    :raises CtxmodesError: ``source`` is not a session.
    """
    from ctxmodes.session.manager import SessionManager

    with SessionManager.fork_from(source, cwd, directory, session_id=session_id) as forked:
        assert forked.session_file is not None  # a fork is always written
        return forked.session_file


def add_session_id_option(parser: argparse.ArgumentParser) -> None:
    """Pi's ``--session-id``: the session of exactly that id, created with it if missing."""
    parser.add_argument(
        "--session-id",
        metavar="ID",
        help="the working directory's session of exactly this id, or a new session given "
        "this id (as Pi's --session-id)",
    )


def session_of_id(
    args: argparse.Namespace, cwd: Path, directory: Path | None
) -> tuple[Path | None, str | None]:
    """What ``--session-id`` asks for: the file of the working directory's session of that
    id, else the id a new session takes (with a warning, as in Pi); ``(None, None)`` without
    the flag.

    :raises CtxmodesError: an id Pi would refuse, or ``--session``, ``-c`` or ``-r`` given too.
    """
    import sys

    from ctxmodes.errors import CtxmodesError
    from ctxmodes.session.ids import InvalidSessionIdError, validate_session_id
    from ctxmodes.session.manager import SessionManager

    wanted: str | None = getattr(args, "session_id", None)
    if wanted is None:
        return None, None
    given = [
        flag
        for flag, value in (
            ("--session", getattr(args, "session", None)),
            ("--continue", getattr(args, "continue_recent", False)),
            ("--resume", getattr(args, "resume", False)),
        )
        if value
    ]
    if given:
        raise CtxmodesError(f"--session-id cannot be combined with {', '.join(given)}")
    try:
        validate_session_id(wanted)
    except InvalidSessionIdError as error:
        raise CtxmodesError(str(error)) from None
    if getattr(args, "fork", None) is not None:
        # The fork takes the id; as Pi, never one of the project's sessions already has.
        if any(info.id == wanted for info in SessionManager.list_sessions(cwd, directory)):
            raise CtxmodesError(f"Session already exists with id '{wanted}'")
        return None, wanted
    if not getattr(args, "no_session", False):
        for info in SessionManager.list_sessions(cwd, directory):
            if info.id == wanted:
                return info.path, None
        print(
            f"Warning: No project session found with id '{wanted}'; creating a new session "
            "with that id.",
            file=sys.stderr,
        )
    return None, wanted


def add_api_key_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--api-key",
        metavar="KEY",
        help="the API key of the model's provider for this run, over stored, configured and "
        "environment keys (as Pi's --api-key; needs --model or --models). Others on the "
        "machine may see a command line: an environment variable is safer",
    )


def add_model_options(parser: argparse.ArgumentParser, also: str = "") -> None:
    """``--model PATTERN`` and ``--provider NAME``, read as Pi reads them (see
    :mod:`ctxmodes.providers.cli_model`); ``also``: more of ``--model``'s help."""
    parser.add_argument(
        "--model",
        metavar="PATTERN",
        help="the model: provider/id (anthropic/claude-sonnet-4-5), an id or part of one "
        "(sonnet), as Pi's --model; :LEVEL after it sets --thinking; or scripted:FILE" + also,
    )
    parser.add_argument(
        "--provider", metavar="NAME", help="look for --model among this provider's models"
    )


def _configured_registry(settings: Settings) -> ProviderRegistry:
    from ctxmodes.plugins import make_configured_plugin_manager
    from ctxmodes.providers.registry import registry_from_plugin_manager

    return registry_from_plugin_manager(make_configured_plugin_manager(settings))


def provider_model(settings: Settings, provider: str, pattern: str) -> str:
    """``--provider PROVIDER --model PATTERN`` as one spec, ``provider/id[:level]``.

    :raises CtxmodesError: an unknown provider, or no model of it that the pattern names.
    """
    from ctxmodes.providers.cli_model import resolve_cli_model

    registry = _configured_registry(settings)
    found = resolve_cli_model(pattern, list(registry.models), registry.has_credentials, provider)
    return found.spec


def use_api_key(args: argparse.Namespace, model: str | None, settings: Settings) -> None:
    """Give ``--api-key`` to the provider of ``model``, the model the run starts on as
    ``--model`` or the scope chose it (Pi's rule: not the configured default).

    :raises CtxmodesError: no such model, one that is not a provider's, or an empty key.
    """
    from ctxmodes.errors import CtxmodesError
    from ctxmodes.providers.auth import set_runtime_api_key

    key: str | None = getattr(args, "api_key", None)
    if key is None:
        return
    if not key.strip():
        raise CtxmodesError("--api-key requires a non-empty value")
    if model is None:
        raise CtxmodesError("--api-key requires a model to be specified via --model or --models")
    named, _ = _configured_registry(settings).read_model_option(model)
    provider, slash, _ = named.partition("/")
    if not slash or ":" in provider:
        raise CtxmodesError(f"--api-key is for a provider's model (PROVIDER/MODEL), not {model!r}")
    set_runtime_api_key(provider, key)


def add_mode_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mode",
        metavar="NAME",
        help="context-management mode (overrides configuration and CTXMODES_MODE)",
    )


def add_session_mode_options(parser: argparse.ArgumentParser) -> None:
    """``--mode`` and ``--switch-mode`` of a command that runs a session: a session keeps the
    mode it records, so asking for another one must be confirmed."""
    parser.add_argument(
        "--mode",
        metavar="NAME",
        help="context-management mode of a new session; an existing session keeps the mode "
        "it records unless --switch-mode confirms the change",
    )
    parser.add_argument(
        "--switch-mode",
        action="store_true",
        help="confirm switching an existing session to --mode",
    )


def add_session_dir_option(parser: argparse.ArgumentParser) -> None:
    """``--session-dir DIR``, as Pi's: one directory for every project's sessions."""
    parser.add_argument(
        "--session-dir",
        metavar="DIR",
        help="where sessions are kept and looked up: one directory for every project (over "
        "PI_CODING_AGENT_SESSION_DIR and Pi's sessionDir); default: Pi's folder per project",
    )


def session_directory(args: argparse.Namespace, settings: Settings) -> Path | None:
    """The directory ``--session-dir``, the environment or the settings give every project's
    sessions (``None``: Pi's folder per project)."""
    from ctxmodes.session.paths import configured_session_dir

    return configured_session_dir(getattr(args, "session_dir", None), settings.session_dir)


def add_thinking_option(parser: argparse.ArgumentParser) -> None:
    """``--thinking LEVEL``, as Pi's: the level of this run (see
    :attr:`~ctxmodes.host.options.HostOptions.requested_thinking_level`)."""
    from ctxmodes.thinking_levels import THINKING_LEVELS

    parser.add_argument(
        "--thinking",
        metavar="LEVEL",
        choices=THINKING_LEVELS,
        help=f"thinking level of this run ({', '.join(THINKING_LEVELS)}), clamped to what "
        "the model takes; a new session starts at it, an existing one runs at it",
    )


def add_models_option(parser: argparse.ArgumentParser) -> None:
    """``--models PATTERNS``, as Pi's: the models Ctrl+P cycles through (over the
    ``enabled_models`` setting)."""
    parser.add_argument(
        "--models",
        metavar="PATTERNS",
        type=lambda text: [pattern.strip() for pattern in text.split(",")],
        help="comma-separated models for Ctrl+P to cycle through: globs (anthropic/*), ids or "
        "provider/id, each with an optional :LEVEL (sonnet:high,haiku:low)",
    )


def mode_request(args: argparse.Namespace) -> ModeRequest | None:
    """The mode the command line asks for explicitly (``None``: the session's own, or the
    configured default for a new one)."""
    from ctxmodes.session_mode import ModeRequest

    if args.mode is None:
        return None
    return ModeRequest(args.mode, confirmed=args.switch_mode)


def cli_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings a command's flags override, as dotted keys."""
    return {"mode": getattr(args, "mode", None), "model": getattr(args, "model", None)}


def run_trust(args: argparse.Namespace, ask: AskTrust | None = None) -> TrustResolver:
    """The run's one trust decision, shared by its settings and its resources:
    ``--approve``/``--no-approve``, else a saved decision, ``defaultProjectTrust``, or
    ``ask`` (``None``: nobody to ask, so an undecided project is not trusted)."""
    from ctxmodes.resources.trust import default_resolver

    return default_resolver(approve=getattr(args, "approve", None), ask=ask)


def command_settings(args: argparse.Namespace) -> LoadedSettings:
    """The settings of a command that inspects them (``--mode``/``--model`` overriding),
    with the project's file only when ``--approve`` or a saved decision trusts it; a file
    left out is said in one line on standard error."""
    import sys

    from ctxmodes.config import load_settings

    trust = run_trust(args)
    loaded = load_settings(cli=cli_overrides(args), trust=trust.is_trusted)
    for line in trust_lines(trust, loaded.skipped):
        print(line, file=sys.stderr)
    return loaded


def command_startup_settings(args: argparse.Namespace) -> tuple[str, StartupSettings]:
    """The mode (``--mode`` overriding) and the settings holding the plugin lists, of a
    command that needs nothing else: read without validating the other settings
    (``ctxmodes config show`` does), so that pydantic is not imported; trust and a file
    left out are told as by :func:`command_settings`. A value this reading cannot take
    is validated in full, for the settings model's error."""
    import sys

    from ctxmodes.config_sources import StartupSettings, read_startup_settings

    resolvers: list[TrustResolver] = []

    def trusted(directory: Path) -> bool:
        # Asked only when there is a project file: the trust store is not loaded otherwise.
        resolvers.append(run_trust(args))
        return resolvers[-1].is_trusted(directory)

    startup = read_startup_settings(mode=args.mode, trusted=trusted)
    if startup is None or startup.mode is None:
        loaded = command_settings(args)
        mode, plugins = loaded.settings.mode, loaded.settings.plugins
        return mode, StartupSettings(mode, plugins.allow, list(plugins.block), loaded.skipped)
    for trust in resolvers:
        for line in trust_lines(trust, startup.skipped):
            print(line, file=sys.stderr)
    return startup.mode, startup


def trust_lines(trust: TrustResolver, skipped: Path | None) -> list[str]:
    """What to tell about trust after reading settings: a trust store that could not be
    read, and the project file left out (``skipped``)."""
    from ctxmodes.resources.trust import how_to_trust

    lines = [f"Warning: {problem}" for problem in trust.problems]
    if skipped is not None:
        lines.append(f"Note: {skipped} was not loaded: {how_to_trust()}")
    return lines


def agent_settings(args: argparse.Namespace, trust: TrustResolver) -> tuple[Path, Settings]:
    """The working directory (``--cwd`` or the current one) and the effective settings of a
    command that runs the agent. Their mode is the configured default; the project's file
    counts when ``trust`` trusts the directory. Whether a model can answer is known once
    the session is open (:func:`require_model`).

    :raises CtxmodesError: the directory does not exist.
    """
    from pathlib import Path

    from ctxmodes.errors import CtxmodesError

    cwd = (args.cwd if args.cwd is not None else Path.cwd()).resolve()
    if not cwd.is_dir():
        raise CtxmodesError(f"no such directory: {cwd}")
    return cwd, settings_reader(args, trust)(cwd)


def session_settings(
    args: argparse.Namespace,
    trust: TrustResolver,
    cwd: Path,
    settings: Settings,
    session_file: Path | None,
) -> tuple[Path, Settings]:
    """The working directory and settings a stored session runs with: those of the other
    project it records, when that directory exists (and ``--cwd`` names none), as Pi reads
    a resumed session's project settings; else ``cwd`` and ``settings``, read for finding
    the session."""
    from ctxmodes.session.listing import recorded_directory

    if session_file is None or args.cwd is not None:
        return cwd, settings
    where = recorded_directory(session_file)
    if where is None or where == cwd:
        return cwd, settings
    return where, settings_reader(args, trust)(where)


def settings_reader(args: argparse.Namespace, trust: TrustResolver) -> Callable[[Path], Settings]:
    """Reads the effective settings of a command that runs the agent in a working directory,
    each call anew (the terminal's ``/reload``, and a session of another project taken up
    in the terminal): the files as they are then, the command line's values over them, the
    project's file as ``trust`` decides it for the run.

    :raises ConfigError: a file that is not valid, as at start-up.
    """
    from ctxmodes.config import load_settings

    # ``--mode`` is a request for this session (see ``mode_request``), not the default.
    cli: dict[str, Any] = {
        "model": getattr(args, "model", None),
        "enabled_models": getattr(args, "models", None),
        # Pi's --verbose: the start-up header even where quietStartup leaves it out.
        "terminal.quiet_startup": False if getattr(args, "verbose", False) else None,
        # --no-builtin-tools stands over every project's defaultTools.
        "default_tools": [] if getattr(args, "no_builtin_tools", False) else None,
    }

    def read(cwd: Path) -> Settings:
        return load_settings(cwd=cwd, cli=cli, trust=trust.is_trusted).settings

    return read


def configured_defaults(trust: TrustResolver, cwd: Path) -> SavedDefaults:
    """The model, the scope's patterns and the thinking level a start without ``--model``,
    ``--models`` and ``--thinking`` would take, and where each setting comes from: what
    Pi's settings manager gives as the defaults, for the pickers' marks and their Ctrl+S.

    :raises ConfigError: a file that is not valid, as at start-up.
    """
    from ctxmodes.config import load_settings
    from ctxmodes.tui.saved_defaults import SavedDefaults

    loaded = load_settings(cwd=cwd, trust=trust.is_trusted)
    configured = loaded.settings
    return SavedDefaults(
        configured.model,
        tuple(configured.enabled_models),
        configured.thinking_level,
        dict(loaded.origins),
    )


#: A run with no model to send its prompts to: none named, and none has credentials.
NO_MODEL = (
    "no model available: set a provider's API key (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...) "
    "or run `ctxmodes login`, or pass --model PROVIDER/MODEL (`ctxmodes models` lists them) "
    "or scripted:FILE"
)


def start_model(
    settings: Settings, *, given: str | None, new_session: bool, provider: str | None = None
) -> str | None:
    """The model spec a session is opened with: ``given`` (``--model``, looked for among
    ``provider``'s models when ``--provider`` is given); else, for a new session under a
    scope (``--models``, Pi's ``enabledModels``), the scope's pick (see
    :func:`scope_start_model`); else ``None``: an existing session's own, the configured
    model, or the one Pi would start on (the host picks among those)."""
    if given is not None and provider is not None:
        return provider_model(settings, provider, given)
    if given is None and new_session and settings.enabled_models:
        given = scope_start_model(settings)
    return given


def scope_start_model(settings: Settings) -> str | None:
    """The model a new session starts on under a scope, as Pi picks it when ``--model`` is
    not given: the configured model when the scope holds it, else the scope's first, with
    the level its pattern gives (``--thinking`` still wins); ``None`` when the scope finds
    no model with credentials."""
    from ctxmodes.model_scope import resolve_model_scope
    from ctxmodes.providers.auth import models_with_credentials
    from ctxmodes.providers.registry import ProviderSpecError

    registry = _configured_registry(settings)
    available = models_with_credentials(list(registry.models))
    scope = resolve_model_scope(settings.enabled_models, available).models
    if not scope:
        return None
    try:
        configured = registry.read_model_option(settings.model)[0] if settings.model else None
    except ProviderSpecError:
        configured = None  # it names no model (any more): the scope's first, as in Pi
    chosen = next((scoped for scoped in scope if scoped.model.ref == configured), scope[0])
    level = chosen.thinking_level
    if level is None and chosen.model.ref == configured:
        return settings.model  # as configured, with its own :<level> if it has one
    return chosen.model.ref + (f":{level}" if level else "")


def model_fallback_warning(
    manager: SessionManager, current: ModelInfo | None, given: str | None
) -> str | None:
    """The warning for a reopened session that does not continue on the model it last
    used because that model cannot be used here (Pi warns the same way): ``None`` when
    ``given`` (``--model``) chose another one on purpose, or nothing was replaced."""
    recorded = manager.context_model()
    instead = "no model" if current is None else f"{current.provider}/{current.id}"
    if given is not None or recorded is None or instead == recorded:
        return None
    return (
        f"This session last used {recorded}, which cannot be used here "
        f"(not in `ctxmodes models`, or no credentials); continuing with {instead}"
    )


def require_model(host: AgentHost, manager: SessionManager) -> None:
    """Refuse to open ``manager``'s session on ``host`` without a model: neither configured
    nor recorded in the session (or the recorded one is not usable here), saying which one
    it recorded. Checked before the session starts, which may append to its file.

    :raises CtxmodesError: there is no model.
    """
    from ctxmodes.errors import CtxmodesError

    if host.provider is not None:
        return
    recorded = manager.context_model()
    if recorded is None:
        raise CtxmodesError(NO_MODEL)
    raise CtxmodesError(
        f"{NO_MODEL} (this session last used {recorded}, which has no credentials here or "
        "is not in `ctxmodes models`)"
    )


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
    parser.add_argument(
        "--skill",
        dest="skill_paths",
        action="append",
        default=[],
        metavar="PATH",
        help="load a skill file or folder of skills (repeatable; loads even with --no-skills)",
    )
    parser.add_argument(
        "--prompt-template",
        dest="prompt_template_paths",
        action="append",
        default=[],
        metavar="PATH",
        help="load a prompt template or the .md files of a folder (repeatable; loads even "
        "with --no-prompt-templates)",
    )
    parser.add_argument(
        "--system-prompt",
        metavar="TEXT|FILE",
        help="the system prompt in place of the built-in one and SYSTEM.md: the text, or the "
        "file of that name",
    )
    parser.add_argument(
        "--append-system-prompt",
        metavar="TEXT|FILE",
        action="append",
        help="appended to the system prompt in place of APPEND_SYSTEM.md: the text, or the file "
        "of that name (repeatable)",
    )
    add_trust_options(parser)


def add_startup_options(parser: argparse.ArgumentParser) -> None:
    """Pi's ``--verbose`` and ``--offline``, and its flags for extensions, themes and the
    full-screen terminal (see :func:`refuse_what_only_pi_does`), so that Pi's command lines
    run as they are or say in one line why they cannot."""
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show the start-up header even with terminal.quiet_startup (Pi's quietStartup)",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="accepted as Pi's: ctxmodes makes no network request of its own at start-up "
        "(no update check, no telemetry); only the model is reached",
    )
    parser.add_argument(
        "-ne",
        "--no-extensions",
        action="store_true",
        help="accepted as Pi's: ctxmodes loads no Pi extensions (its plugins are Python "
        "packages, found by entry points)",
    )
    parser.add_argument(
        "--no-themes",
        action="store_true",
        help="accepted as Pi's: ctxmodes' terminal loads no themes",
    )
    for flags in (("-e", "--extension"), ("--theme",), ("--use-theme",), ("--tui-mode",)):
        parser.add_argument(*flags, action="append", metavar="VALUE", help=argparse.SUPPRESS)


#: What ctxmodes says of Pi's flags that ask for what it does not do, by option name.
_ONLY_PI: dict[str, str] = {
    "extension": "-e/--extension loads a Pi extension (TypeScript), which ctxmodes does not "
    "run: its plugins are Python packages",
    "theme": "--theme loads a Pi theme; ctxmodes' terminal has no themes",
    "use_theme": "--use-theme picks a Pi theme; ctxmodes' terminal has no themes",
}


def refuse_what_only_pi_does(args: argparse.Namespace) -> None:
    """:raises CtxmodesError: a flag of Pi's asks for what ctxmodes does not do (an
    extension, a theme, the full-screen terminal); Pi's regular terminal is ctxmodes' own."""
    from ctxmodes.errors import CtxmodesError

    for option, said in _ONLY_PI.items():
        if getattr(args, option, None):
            raise CtxmodesError(said)
    if any(mode != "regular" for mode in getattr(args, "tui_mode", None) or ()):
        raise CtxmodesError("--tui-mode: ctxmodes' terminal has Pi's regular mode only")


def add_tool_options(parser: argparse.ArgumentParser) -> None:
    """Pi's flags choosing the tools the model is offered."""
    tools = parser.add_mutually_exclusive_group()
    tools.add_argument(
        "-t",
        "--tools",
        metavar="NAMES",
        type=_names,
        help="offer only these tools (comma-separated), whoever registers them",
    )
    tools.add_argument(
        "-nt", "--no-tools", action="store_true", help="offer no tools at all, a mode's included"
    )
    tools.add_argument(
        "-nbt",
        "--no-builtin-tools",
        action="store_true",
        help="offer none of the core's own tools (bash, read, edit, write, notebook); a "
        "mode's and plugins' stay",
    )
    parser.add_argument(
        "-xt",
        "--exclude-tools",
        metavar="NAMES",
        type=_names,
        default=(),
        help="never offer these tools (comma-separated)",
    )


def _names(value: str) -> tuple[str, ...]:
    from ctxmodes.tools.selection import unique

    return unique(name.strip() for name in value.split(",") if name.strip())


def tool_selection(args: argparse.Namespace, configured: ToolSelection) -> ToolSelection:
    """The tools ``add_tool_options``' flags select, over the ``configured`` core tools
    (Pi's ``defaultTools``)."""
    import dataclasses

    allowed: tuple[str, ...] | None = () if args.no_tools else args.tools
    builtin = () if args.no_builtin_tools else configured.builtin
    return dataclasses.replace(
        configured, allowed=allowed, builtin=builtin, excluded=frozenset(args.exclude_tools)
    )


def add_trust_options(parser: argparse.ArgumentParser) -> None:
    """Pi's ``--approve``/``--no-approve``: project trust for this run."""
    trust = parser.add_mutually_exclusive_group()
    trust.add_argument(
        "-a",
        "--approve",
        dest="approve",
        action="store_const",
        const=True,
        help="trust the project for this run: its .ctxmodes.toml and its own .pi files "
        "(system prompt, templates, skills)",
    )
    trust.add_argument(
        "-na",
        "--no-approve",
        dest="approve",
        action="store_const",
        const=False,
        help="ignore the project's .ctxmodes.toml and own .pi files for this run",
    )


def resource_loader(args: argparse.Namespace, trust: TrustResolver) -> ResourceLoader:
    """The resource loader for a command's flags, deciding with the run's ``trust``."""
    from ctxmodes.resources import ResourceFlags, default_loader

    flags = ResourceFlags(
        context_files=getattr(args, "context_files", True),
        skills=getattr(args, "skills", True),
        prompt_templates=getattr(args, "prompt_templates", True),
        skill_paths=_from_here(getattr(args, "skill_paths", [])),
        prompt_template_paths=_from_here(getattr(args, "prompt_template_paths", [])),
        system_prompt=_prompt_source(getattr(args, "system_prompt", None)),
        append_system_prompt=_prompt_sources(getattr(args, "append_system_prompt", None)),
    )
    return default_loader(flags=flags, trust=trust)


def _prompt_source(given: str | None) -> str | None:
    """A prompt given on the command line: a file when one of that name exists where
    ctxmodes was started (made absolute), else the text itself, as Pi reads it."""
    if given is None or not os.path.exists(given):
        return given
    return os.path.abspath(given)


def _prompt_sources(given: list[str] | None) -> tuple[str, ...] | None:
    return None if given is None else tuple(str(_prompt_source(each)) for each in given)


def _from_here(paths: list[str]) -> tuple[str, ...]:
    """Paths given on the command line, taken from where ctxmodes was started (as Pi takes
    them), not from a session's working directory."""
    from ctxmodes.resources.entries import resolve_entry

    home = os.environ.get("HOME") or os.path.expanduser("~")
    return tuple(resolve_entry(path, os.getcwd(), home, trim=False) for path in paths)
