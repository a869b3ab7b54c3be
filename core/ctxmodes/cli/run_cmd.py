"""``ctxmodes run``: run prompts non-interactively and print the transcript.

Each PROMPT is submitted in order, as if typed: ``/commands`` run, anything else is a prompt
whose whole run (tool calls included) completes before the next one. The transcript goes to
standard output. The first failure — a model error, a failed command, a plugin error —
stops the run with a one-line message and exit status 1.

``--print`` is Pi's print mode (``ctxmodes -p``, see :mod:`ctxmodes.cli.pi_command_line`):
the first prompt is built as Pi builds it, and standard output gets only the last reply's
text. ``--json`` is Pi's JSON mode (``ctxmodes --mode json``): prompts are built the same
way, and standard output gets the session header and every session event as JSON lines
(see :mod:`ctxmodes.host.json_stream`). As in Pi, a model error is then an event of the
stream, not a failure of the command: it still exits 0.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from ctxmodes.cli.core_commands import add_command_parser
from ctxmodes.cli.options import (
    CONFIRM_SWITCH,
    add_api_key_option,
    add_fork_option,
    add_model_options,
    add_models_option,
    add_resource_options,
    add_session_dir_option,
    add_session_id_option,
    add_session_mode_options,
    add_startup_options,
    add_thinking_option,
    add_tool_options,
    agent_settings,
    forked_session,
    mode_request,
    model_fallback_warning,
    refuse_what_only_pi_does,
    require_model,
    resource_loader,
    run_trust,
    session_directory,
    session_of_id,
    session_settings,
    settings_reader,
    start_model,
    tool_selection,
    use_api_key,
)

if TYPE_CHECKING:
    from ctxmodes.cli.pi_prompts import PiArguments
    from ctxmodes.config import Settings
    from ctxmodes.config_reload import ReloadableSettings
    from ctxmodes.host.options import HostOptions
    from ctxmodes.host.runtime import AgentHost
    from ctxmodes.hostapi import UserInterface
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.session.writer import Durability


class OpenedHost(NamedTuple):
    """A host ready to start on its session."""

    host: AgentHost
    manager: SessionManager
    options: HostOptions
    #: The model scope's patterns (``--models``, else Pi's ``enabledModels``).
    model_patterns: list[str]
    #: The settings and how to read them again for each session that replaces the running
    #: one (RPC's ``new_session``, ``switch_session``, ``fork``, ``clone``).
    reloadable: ReloadableSettings


def register(subparsers: Any) -> None:
    parser = add_command_parser(subparsers, "run")
    add_session_mode_options(parser)
    add_model_options(parser, "; overrides configuration and CTXMODES_MODEL")
    add_thinking_option(parser)
    add_models_option(parser)
    add_api_key_option(parser)
    # Also given before the command (``ctxmodes -c run``, as ``pi -c -p``): without a value
    # here, the one given there is kept (see _session_choice).
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--session",
        metavar="PATH|ID",
        default=argparse.SUPPRESS,
        help="the session to continue: a .jsonl file (created at the first prompt if "
        "missing) or a session id or its beginning; default: a new session in Pi's session "
        "directory for the working directory",
    )
    add_fork_option(where, default=argparse.SUPPRESS)
    where.add_argument(
        "-c",
        "--continue",
        dest="continue_recent",
        action="store_true",
        default=argparse.SUPPRESS,
        help="continue the most recent session of the working directory (Pi's directory layout)",
    )
    where.add_argument(
        "--no-session",
        dest="no_session",
        action="store_true",
        default=argparse.SUPPRESS,
        help="keep the session in memory only: no file is written, as Pi's --no-session",
    )
    add_session_id_option(parser)
    parser.add_argument(
        "-n",
        "--name",
        metavar="NAME",
        help="name the session (as /name does), as Pi's --name",
    )
    parser.add_argument(
        "--cwd", metavar="DIR", type=Path, help="working directory (default: the current one)"
    )
    parser.add_argument(
        "--trace",
        metavar="FILE",
        type=Path,
        help="append one JSON line per model request: exactly what the model was sent",
    )
    add_session_dir_option(parser)
    add_resource_options(parser)
    add_tool_options(parser)
    add_startup_options(parser)
    parser.add_argument(
        "-p",
        "--print",
        dest="print_reply",
        action="store_true",
        help="Pi's print mode: print only the last reply's text; what is piped into standard "
        "input, then each @FILE's text, goes first into the first prompt (what `ctxmodes -p` "
        "runs)",
    )
    parser.add_argument(
        "--json",
        dest="json_events",
        action="store_true",
        help="Pi's JSON mode: standard output gets the session header, then every session "
        "event as one JSON line (what `ctxmodes --mode json` runs); prompts are built as "
        "with --print",
    )
    parser.add_argument(
        "--rpc",
        action="store_true",
        help="Pi's RPC mode: JSON commands on standard input, one a line; responses and "
        "session events on standard output (what `ctxmodes --mode rpc` runs)",
    )
    parser.add_argument("prompts", nargs="*", metavar="PROMPT", help="prompts, in order")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ctxmodes.cli.process_markers import mark_agent_process

    refuse_what_only_pi_does(args)
    mark_agent_process()  # before this session starts any process
    if args.rpc:
        from ctxmodes.rpc.command_line import run_rpc

        return run_rpc(args)
    # Before the host's imports: a command line with nothing to send is refused at once.
    read = _prompts(args)

    import sys

    from ctxmodes.host.failures import FailureWatch
    from ctxmodes.host.interrupt import interrupt_aborts
    from ctxmodes.host.json_stream import JsonEventStream
    from ctxmodes.host.trace import RequestTrace
    from ctxmodes.host.transcript import TranscriptPrinter
    from ctxmodes.ui import HeadlessUI

    # In print and JSON mode standard output carries the reply or the events alone, and an
    # error that stops the run is said once, as the command's error line.
    quiet = bool(args.print_reply or args.json_events)
    ui = HeadlessUI(echo=sys.stderr if quiet else sys.stdout, echo_errors=not quiet)
    opened = open_host(args, ui)
    host, manager, options = opened.host, opened.manager, opened.options
    prompts = read.prompts(auto_resize_images=options.auto_resize_images)
    failures = FailureWatch(ui, model_errors=not args.json_events)
    events: JsonEventStream | None = None
    if args.json_events:
        events = JsonEventStream(sys.stdout.buffer, lambda: host.session.model, options.clock)
        host.subscribe(events)
    elif not args.print_reply:
        host.subscribe(TranscriptPrinter(sys.stdout))
    host.subscribe(failures)
    trace = RequestTrace(args.trace) if args.trace is not None else None
    if trace is not None:
        host.subscribe(trace)
    try:
        check_before_start(host, manager, args.model)
        if events is not None:
            header = manager.get_header()
            if header is not None:
                events.write_header(header)
        host.start(manager)
        warn_about_resources(host)
        for index, text in enumerate(prompts.texts):
            # Ctrl-C, SIGTERM and SIGHUP stop the run as an abort, recorded in the session,
            # then end the command (the session closed below, its shell with it).
            with interrupt_aborts(host.session.abort, termination=True):
                host.session.submit(text, images=prompts.images if index == 0 else ())
            failures.raise_if_failed()
            if trace is not None:
                trace.raise_if_failed()
        if args.print_reply and not args.json_events:
            print_last_reply(host.session, sys.stdout)
    finally:
        try:
            host.close()
        finally:
            if trace is not None:
                trace.close()
            if quiet:
                # Those no error line reports: of the shutdown, or beside the one that
                # stopped the run.
                failures.say_failures(sys.stderr)
    return 0


def open_host(args: argparse.Namespace, ui: UserInterface) -> OpenedHost:
    """The host of the session ``args`` name (new, continued, forked or of an id), not yet
    started, with the model and options of the command line and configuration; the
    session is named when ``--name`` says so."""
    from ctxmodes.cli.session_arg import find_session, refuse_another_projects
    from ctxmodes.config_reload import ReloadableSettings
    from ctxmodes.errors import CtxmodesError
    from ctxmodes.host.runtime import AgentHost
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.session.writer import Durability

    session, continue_recent = _session_choice(args)
    name = _session_name(args)
    trust = run_trust(args)
    cwd, settings = agent_settings(args, trust)
    directory = session_directory(args, settings)
    found, new_id = session_of_id(args, cwd, directory)
    forked = forked_session(args, cwd, directory, new_id)
    if (found or forked) is not None:
        session = str(found or forked)
    target = None
    if session is not None:
        target = find_session(session, cwd, directory)
        refuse_another_projects(session, target)
        cwd, settings = session_settings(args, trust, cwd, settings, target.path)
    new_session = session is None and not continue_recent
    scoped = start_model(
        settings, given=args.model, new_session=new_session, provider=args.provider
    )
    use_api_key(args, scoped, settings)
    if scoped is not None:
        settings = settings.model_copy(update={"model": scoped})
    durability = Durability(settings.durability)
    if target is not None:
        manager = SessionManager.open(
            target.path,
            directory,
            cwd_override=cwd if args.cwd is not None else None,
            durability=durability,
        )
    elif continue_recent:
        manager = SessionManager.continue_recent(cwd, directory, durability=durability)
    else:
        manager = _new_session(args, cwd, directory, new_id, durability)
    if not Path(manager.cwd).is_dir():
        manager.close()
        raise CtxmodesError(
            f"the session's working directory no longer exists: {manager.cwd} (session "
            f"{manager.session_file}); to continue it in another, give --cwd DIR"
        )
    if name is not None:
        manager.append_session_info(name)
    options = _host_options(args, settings)
    try:
        host = AgentHost.from_settings(
            settings,
            ui=ui,
            options=options,
            mode_request=mode_request(args),
            confirm_hint=CONFIRM_SWITCH,
            resources=resource_loader(args, trust),
            # --model wins over the session's own model; the configured one does not.
            session_model=manager.context_model() if args.model is None else None,
        )
    except BaseException:
        manager.close()
        raise
    reloadable = ReloadableSettings(settings, settings_reader(args, trust), cwd)
    return OpenedHost(host, manager, options, settings.enabled_models, reloadable)


def check_before_start(
    host: AgentHost,
    manager: SessionManager,
    given_model: str | None,
    *,
    model_required: bool = True,
) -> None:
    """Warn on standard error about what the session file holds and about a session that
    does not continue on its own model (``given_model`` is ``--model``), and refuse a
    session no model can answer (closing the session, which the host does not own yet);
    without ``model_required``, only say so, for a client that may name a model later.

    :raises CtxmodesError: no usable model, and one is required.
    """
    import sys

    from ctxmodes.cli.session_warnings import warn_about_session
    from ctxmodes.errors import CtxmodesError

    if manager.session_file is not None:
        warn_about_session(manager.session_file, manager)
    try:
        require_model(host, manager)
    except CtxmodesError as error:
        if not model_required:
            print(f"Warning: {error}", file=sys.stderr)
            return
        manager.close()
        raise
    provider = host.provider
    current = provider.info if provider is not None else None
    fallback = model_fallback_warning(manager, current, given_model)
    if fallback is not None:
        print(f"Warning: {fallback}", file=sys.stderr)


def warn_about_resources(host: AgentHost) -> None:
    """The started session's resource warnings and untrusted-project notice, on standard
    error."""
    import sys

    from ctxmodes.resources.trust import untrusted_notice

    resources = host.session.resources
    notice = untrusted_notice(host.session.cwd, resources.trusted)
    for line in [*(f"Warning: {w}" for w in resources.warnings), notice]:
        if line is not None:
            print(line, file=sys.stderr)


def _new_session(
    args: argparse.Namespace,
    cwd: Path,
    directory: Path | None,
    session_id: str | None,
    durability: Durability,
) -> SessionManager:
    """A new session, of ``session_id`` when given; in memory only with ``--no-session``."""
    from ctxmodes.session.manager import SessionManager

    if getattr(args, "no_session", False):
        return SessionManager.in_memory(cwd, session_id=session_id)
    return SessionManager.create(cwd, directory, session_id=session_id, durability=durability)


def _host_options(args: argparse.Namespace, settings: Settings) -> HostOptions:
    """The configuration's host options with the run's thinking level and tool flags."""
    import dataclasses

    from ctxmodes.host.options import HostOptions

    options = HostOptions.of_settings(settings, requested_thinking_level=args.thinking)
    return dataclasses.replace(options, tools=tool_selection(args, options.tools))


def _prompts(args: argparse.Namespace) -> PiArguments:
    """The prompts to send, read: as given, or in print mode as Pi sends them, images
    attached to the first (see :func:`~ctxmodes.cli.pi_prompts.pi_prompts`) once the
    settings say whether to shrink them.

    :raises CtxmodesError: nothing to send, or an ``@FILE`` that cannot be read.
    """
    from ctxmodes.cli.pi_prompts import PiArguments, piped_input, read_pi_arguments
    from ctxmodes.errors import CtxmodesError

    if not (args.print_reply or args.json_events):
        if not args.prompts:
            raise CtxmodesError("run needs a PROMPT")
        return PiArguments("", (), tuple(args.prompts))
    prompts = read_pi_arguments(args.prompts, piped=piped_input(), base=Path.cwd())
    if prompts.sends_nothing:
        raise CtxmodesError("nothing to send: give a prompt, an @FILE or text on standard input")
    return prompts


def _session_name(args: argparse.Namespace) -> str | None:
    """``--name``, trimmed as Pi trims it.

    :raises CtxmodesError: a name that is only whitespace.
    """
    from ctxmodes.errors import CtxmodesError

    if args.name is None:
        return None
    if not args.name.strip():
        raise CtxmodesError("--name requires a non-empty value")
    return str(args.name.strip())


def print_last_reply(session: Any, out: TextIO) -> None:
    """Pi's print mode: each text block of the session's last message, when it is a reply.
    Written as it is for a program reading ``out``, as Pi writes it; on a terminal, what a
    terminal would obey (escape sequences, carriage returns) is shown escaped, as every
    command shows a model's text."""
    from ctxmodes.session.models import AssistantMessage, TextContent
    from ctxmodes.terminal_text import visible_lines

    shown = visible_lines if out.isatty() else str
    messages = session.messages
    last = messages[-1] if messages else None
    if isinstance(last, AssistantMessage):
        for block in last.content:
            if isinstance(block, TextContent):
                print(shown(block.text), file=out)


def _session_choice(args: argparse.Namespace) -> tuple[str | None, bool]:
    """``--session`` and ``-c``, given before ``run`` or after it.

    :raises CtxmodesError: both are given, or ``-r``, whose picker needs a terminal.
    """
    from ctxmodes.errors import CtxmodesError

    session: str | None = getattr(args, "session", None)
    continue_recent: bool = getattr(args, "continue_recent", False)
    if getattr(args, "fork", None) is not None:
        # Given on both sides of ``run``, which argparse cannot see together.
        others = [
            flag
            for flag, given in (
                ("--session", session is not None),
                ("--continue", continue_recent),
                ("--no-session", getattr(args, "no_session", False)),
            )
            if given
        ]
        if others:
            raise CtxmodesError(f"--fork cannot be combined with {', '.join(others)}")
    if getattr(args, "resume", False):
        raise CtxmodesError(
            "run has no session picker: name the session with --session, or continue the "
            "most recent one with -c"
        )
    if session is not None and continue_recent:
        raise CtxmodesError("--session and -c name two sessions: give one of them")
    if getattr(args, "no_session", False) and (session is not None or continue_recent):
        raise CtxmodesError("--no-session keeps no session: leave out --session and -c")
    return session, continue_recent
