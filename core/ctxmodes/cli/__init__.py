"""The ``ctxmodes`` command line.

Each core sub-command lives in its own module of this package and exposes
``register(subparsers)``; :mod:`ctxmodes.cli.core_commands` lists them, so that only the
module of the command being run is imported. Plugins add theirs through
``ctx_register_cli_commands`` (:mod:`ctxmodes.cli_commands`). Registration must stay
import-light (heavy modules are imported inside the handler) so that ``ctxmodes --help``
starts fast.

Internal package: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import importlib
import os
import sys
import threading
from collections.abc import Callable, Container, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ctxmodes._version import __version__
from ctxmodes.cli.core_commands import CORE_COMMANDS
from ctxmodes.cli.options import add_session_choice
from ctxmodes.cli.parser_class import CommandParser
from ctxmodes.cli.pi_command_line import meant_command_line, named_command
from ctxmodes.cli.terminals import on_a_terminal, stdin_piped
from ctxmodes.errors import CtxmodesError, PluginError, Terminated

if TYPE_CHECKING:
    import pluggy

    from ctxmodes.cli_commands import CliCommand
    from ctxmodes.plugin_calls import Caller
    from ctxmodes.plugin_selection import PluginSelection

_COMMANDS_HOOK = "ctx_register_cli_commands"


def build_parser(
    pm: pluggy.PluginManager | None = None, *, argv: Sequence[str] | None = None
) -> argparse.ArgumentParser:
    """The parser: the core commands, then the commands of ``pm``'s plugins (by default, the
    configured plugins).

    :param argv: the command line about to be parsed. Only the command it names gets its
        full parser (its module imported, its arguments added); the others are listed by
        name and help line, which is all ``--help`` shows of them. When it names a core
        command, the other commands are left out, and then, or when it asks for the version
        first, the plugins are not loaded at all.
    """
    parser = CommandParser(
        prog="ctxmodes",
        description="Context-management modes for coding agents over Pi session files.",
        epilog="Without a command, `ctxmodes` reads its command line as Pi does: "
        "`ctxmodes -c --model SPEC` is `ctxmodes chat -c --model SPEC`, `ctxmodes MESSAGE` "
        "opens the interactive session with MESSAGE, and `ctxmodes -p MESSAGE` (or MESSAGE "
        "without a terminal) is `ctxmodes run --print MESSAGE`; `ctxmodes --list-models "
        "[SEARCH]` prints Pi's table of the models with credentials (`ctxmodes models "
        "--pi-list --search SEARCH`).",
    )
    parser.add_argument("-v", "--version", action="version", version=f"ctxmodes {__version__}")
    add_session_choice(parser)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    named = None if argv is None else named_command(argv)
    built = {CORE_COMMANDS[named].module} if named in CORE_COMMANDS else set()
    for name, core in CORE_COMMANDS.items():
        if name in subparsers.choices:
            continue  # registered by its module together with an earlier command
        if argv is None or core.module in built:
            importlib.import_module(core.module).register(subparsers)
        elif not built:
            # Listed for --help and the errors that name the commands; a command line that
            # names a core command reaches neither (each parser costs a fraction of a ms).
            subparsers.add_parser(name, help=core.help, add_help=False)
    if argv is not None and (named in CORE_COMMANDS or argv[:1] in (["-v"], ["--version"])):
        return parser
    callers = _configured_callers() if pm is None else _manager_callers(pm)
    for command in plugin_commands(callers, subparsers):
        _add_plugin_command(subparsers, command, full=argv is None or command.name == named)
    return parser


def _command_names(parser: argparse.ArgumentParser) -> frozenset[str]:
    """The commands ``parser`` knows (each core command; the plugins' when it loaded them)."""
    for action in parser._actions:  # argparse keeps its sub-commands there, and only there
        if isinstance(action, argparse._SubParsersAction):
            return frozenset(action.choices)
    return frozenset()


def _configured_callers() -> list[tuple[str, Caller]]:
    """The command-registering hook of each configured entry-point plugin. Every start of
    the command line that may show a plugin's command pays for this, so it neither
    validates the whole configuration (pydantic) nor registers the core's default plugins,
    whose commands are the core's, and it calls the plugins without a plugin manager when
    they allow it (:mod:`ctxmodes.plugin_calls`)."""
    from ctxmodes.plugin_calls import registration_callers
    from ctxmodes.plugin_selection import select_entry_points

    selection = _configured_selection()
    callers = registration_callers(_COMMANDS_HOOK, select_entry_points(selection))
    if callers is not None:
        return callers
    from ctxmodes.plugins import make_plugin_manager

    return _manager_callers(make_plugin_manager(selection=selection, default_plugins=()))


def _configured_selection() -> PluginSelection:
    """The configured allow and block lists with the environment's, read without validating
    the rest of the settings. Nobody is asked about trust: a saved decision or
    ``defaultProjectTrust`` decides.

    :raises PluginError: an essential plugin is blocked.
    """
    from ctxmodes.config_sources import read_startup_settings
    from ctxmodes.plugin_selection import PluginSelection

    startup = read_startup_settings()
    if startup is None:  # an unusual value: the settings model words the error
        from ctxmodes.config import load_settings

        plugins = load_settings().settings.plugins
        selection = PluginSelection.from_env(allow=plugins.allow, block=plugins.block)
    else:
        selection = PluginSelection.from_env(allow=startup.allow, block=startup.block)
    selection.refuse_blocked_essentials()
    return selection


def _manager_callers(pm: pluggy.PluginManager) -> list[tuple[str, Caller]]:
    from ctxmodes.plugins import each_plugin

    return sorted(each_plugin(pm, _COMMANDS_HOOK))


def plugin_commands(callers: Iterable[tuple[str, Caller]], subparsers: Any) -> list[CliCommand]:
    """Every command the plugins register through ``callers`` (``(plugin name, caller)``
    of their ``ctx_register_cli_commands``, in plugin-name order).

    :raises PluginError: a name is taken by a core command or by another plugin.
    """
    owners: dict[str, str] = dict.fromkeys(subparsers.choices, "the core")
    commands: list[CliCommand] = []
    for plugin_name, call in callers:

        def register(command: CliCommand, plugin_name: str = plugin_name) -> None:
            owner = owners.get(command.name)
            if owner is not None:
                raise PluginError(
                    f"command {command.name!r} of plugin {plugin_name!r} is already "
                    f"provided by {owner if owner == 'the core' else repr(owner)}"
                )
            owners[command.name] = plugin_name
            commands.append(command)

        call(register=register)
    return commands


def _add_plugin_command(subparsers: Any, command: CliCommand, *, full: bool) -> None:
    """Add ``command``'s parser; ``full``: with its arguments and handler, else only what
    ``--help`` lists."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        command.name, help=command.help, description=command.description or command.help
    )
    if not full:
        return
    if command.configure is not None:
        command.configure(parser)
    parser.set_defaults(handler=command.run)


def _refusal_words(error: OSError) -> str:
    """What the system refused, with the file it concerns when it names one."""
    reason = error.strerror or str(error)
    return f"{error.filename}: {reason}" if error.filename is not None else reason


def print_error(error: CtxmodesError) -> None:
    """``error`` as every command's error line: ``ctxmodes: error: …`` on standard error."""
    from ctxmodes.terminal_text import visible_lines

    # An error may quote a file name, a file or a backend's answer: shown, never obeyed.
    print(f"ctxmodes: error: {visible_lines(str(error))}", file=sys.stderr)


#: What commands leave to the end of the process (see :func:`keep_to_the_end`); ``None``
#: while no program that ends with its command runs.
_kept_to_the_end: list[object] | None = None


def keep_to_the_end(value: object) -> None:
    """Leave ``value`` to be dropped with the process, when :func:`run` ends it after the
    command: a long session's index freed object by object costs an ending process time for
    nothing (3 ms at 100,000 entries, 28 at a million). Called through :func:`main`, by a
    program that goes on, nothing is kept."""
    if _kept_to_the_end is not None:
        _kept_to_the_end.append(value)


def collector_paused_to_the_end() -> contextlib.AbstractContextManager[None]:
    """:func:`~ctxmodes.collector.collector_paused` around a command's work, except that when
    :func:`run` ends the process after the command the collector stays paused: its first
    pass after a pause walks every list made during it (a long session's index: 10 ms at
    100,000 entries, 34 at a million), for nothing just before the process ends."""
    if _kept_to_the_end is None:
        from ctxmodes.collector import collector_paused

        return collector_paused()
    gc.disable()
    return contextlib.nullcontext()


def run() -> NoReturn:
    """The ``ctxmodes`` program: :func:`main`, then the process ends.

    A command whose parser says it leaves nothing behind (``ends_at_once``: it only reads
    and writes its output, its files closed) ends the process as soon as its output is
    flushed, without the interpreter's teardown of every module it imported (~15 ms, a
    tenth of ``session context --json`` on a long session), when nothing else could need
    that teardown: no other thread runs and no exit handler is registered.
    """
    global _kept_to_the_end
    _kept_to_the_end = []
    status, ends_at_once = _main(sys.argv[1:])
    if ends_at_once and threading.active_count() == 1 and not _exit_handlers():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # left to the interpreter's teardown, which reports it as usual
        else:
            os._exit(status)
    sys.exit(status)


def _exit_handlers() -> int:
    """How many exit handlers are registered (CPython counts them; elsewhere, assume some)."""
    count: Callable[[], int] | None = getattr(atexit, "_ncallbacks", None)
    return 1 if count is None else count()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` (by default the program's arguments); its exit status."""
    return _main(sys.argv[1:] if argv is None else list(argv))[0]


def _main(arguments: list[str]) -> tuple[int, bool]:
    """The exit status, and whether the command may end the process at once (see
    :func:`run`)."""
    try:
        os.getcwd()
    except FileNotFoundError:
        # Every command line reads the project's configuration from there, even --help.
        print_error(CtxmodesError("the working directory no longer exists: cd to one that does"))
        return 1, False
    if not arguments and not stdin_piped():
        # `ctxmodes` alone on a terminal, as `pi` alone (with its output redirected, the
        # session says it needs a terminal); with input piped in, print mode (see below).
        arguments = ["chat"]
    try:
        # Pi's command line: `-p PROMPT`, `PROMPT`, chat's options alone (`-c --model X`).
        named = named_command(arguments)
        commands: Container[str] = CORE_COMMANDS
        if named is not None and named not in CORE_COMMANDS:  # perhaps a plugin's
            commands = _command_names(build_parser(argv=arguments))
        meant = meant_command_line(
            arguments,
            is_command=commands.__contains__,
            terminal=on_a_terminal(),
            piped=stdin_piped(),
        )
        parser = build_parser(argv=arguments if meant is None else meant)
        arguments = arguments if meant is None else meant
    except CtxmodesError as exc:
        print_error(exc)
        return 1, False
    args = parser.parse_args(arguments)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2, False
    from ctxmodes.cli.output_streams import tolerate_unencodable_text

    tolerate_unencodable_text()
    try:
        from ctxmodes.pi_settings import apply_http_proxy

        apply_http_proxy()  # before any command sends a request, as Pi applies it
        code: int = handler(args)
    except CtxmodesError as exc:
        print_error(exc)
        return 1, False
    except BrokenPipeError:
        # Output piped into `head` and friends: not an error worth a traceback.
        return 0, False
    except OSError as exc:
        # The system refused: a full disk, a file that may not be written, output that
        # cannot be. Nothing to debug, one line to act on.
        print_error(CtxmodesError(_refusal_words(exc)))
        return 1, False
    except KeyboardInterrupt:
        # Ctrl-C: the user stopped the command. One line saying so and the shell's status
        # for it, no traceback.
        print("ctxmodes: interrupted", file=sys.stderr)
        return 130, False
    except Terminated as ended:
        # SIGTERM or SIGHUP, the work wound down: the signal's status, nothing said (the
        # terminal may be gone), as Pi ends.
        return ended.exit_status, False
    return code, bool(getattr(args, "ends_at_once", False))
