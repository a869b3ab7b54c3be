"""``ctxmodes chat`` (and ``ctxmodes`` alone on a terminal): the interactive session.

MESSAGE arguments (Pi's initial messages, with ``@FILE``; an image file is attached to the
first) are sent when the session opens.
``-c/--continue`` continues the most recent session of the working directory, ``-r/--resume``
picks one first, ``--session PATH|ID`` opens that file (created at the first prompt) or the
session with that id; ``--mode`` and ``--model``
work as for ``run``. Prompts typed in the editor are kept in a history file in the
platform's state directory.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxmodes.cli.core_commands import add_command_parser
from ctxmodes.cli.options import (
    add_api_key_option,
    add_model_options,
    add_models_option,
    add_resource_options,
    add_session_choice,
    add_session_dir_option,
    add_session_id_option,
    add_session_mode_options,
    add_startup_options,
    add_thinking_option,
    add_tool_options,
    agent_settings,
    fork_into,
    forked_session,
    refuse_what_only_pi_does,
    resource_loader,
    run_trust,
    session_directory,
    session_of_id,
    session_settings,
    tool_selection,
)
from ctxmodes.errors import CtxmodesError, SessionCwdMissingError

if TYPE_CHECKING:
    from ctxmodes.cli.pi_prompts import PiArguments
    from ctxmodes.resources.trust import TrustResolver


def register(subparsers: Any) -> None:
    parser = add_command_parser(subparsers, "chat")
    add_session_mode_options(parser)
    add_model_options(parser)
    add_thinking_option(parser)
    add_models_option(parser)
    add_api_key_option(parser)
    add_session_choice(parser)
    add_session_dir_option(parser)
    add_session_id_option(parser)
    parser.add_argument("-n", "--name", metavar="NAME", help="name the session, as /name does")
    parser.add_argument("--cwd", metavar="DIR", type=Path, help="working directory")
    add_resource_options(parser)
    add_tool_options(parser)
    add_startup_options(parser)
    parser.add_argument(
        "messages",
        nargs="*",
        metavar="MESSAGE",
        help="sent when the session opens, each after the reply to the one before; @FILE puts "
        "a file's text into the first, as in Pi",
    )
    parser.set_defaults(handler=run)


def history_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_state_dir("ctxmodes")) / "prompt-history"


def require_terminal() -> None:
    """The interactive session draws on a terminal and reads keys from one: refuse at once,
    before anything is opened or created, when either end is not a terminal."""
    from ctxmodes.cli.terminals import on_a_terminal

    if not on_a_terminal():
        raise CtxmodesError(
            "the interactive session needs a terminal; for one prompt without a terminal, "
            "use `ctxmodes run PROMPT`"
        )


def run(args: argparse.Namespace) -> int:
    # Before the imports: the terminal's machinery takes most of a second to load, and the
    # refusals should not wait for it.
    refuse_what_only_pi_does(args)
    require_terminal()

    from ctxmodes.cli.pi_prompts import read_pi_arguments
    from ctxmodes.cli.process_markers import mark_agent_process
    from ctxmodes.cli.session_arg import find_session
    from ctxmodes.cli.trust_prompt import ask_on_terminal
    from ctxmodes.session.paths import default_session_dir

    mark_agent_process()  # before this session starts any process

    prompts = read_pi_arguments(args.messages, piped=None, base=Path.cwd())
    if args.name is not None and not args.name.strip():
        raise CtxmodesError("--name requires a non-empty value")
    # One question for the run, before the settings: the project's configuration waits
    # for it as its resources do.
    trust = run_trust(args, ask=ask_on_terminal)
    cwd, settings = agent_settings(args, trust)
    directory = session_directory(args, settings)
    session_file, new_id = session_of_id(args, cwd, directory)
    forked = forked_session(args, cwd, directory, new_id)
    if forked is not None:
        session_file, new_id = forked, None
    if args.session is not None:
        found = find_session(args.session, cwd, directory)
        session_file = found.path
        if found.elsewhere is not None:
            if not _fork_here(args.session, found.elsewhere):
                print("Aborted.")  # Pi's word
                return 0
            session_file = fork_into(found.path, cwd, directory)
    if args.resume:
        from ctxmodes.tui.startup_picker import pick_session

        session_file = pick_session(directory or default_session_dir(cwd), cwd)
        if session_file is None:
            print("No session selected")  # Pi's words
            return 0
    cwd, settings = session_settings(args, trust, cwd, settings, session_file)
    return _chat(args, cwd, settings, session_file, trust, directory, prompts, new_id)


def _chat(
    args: argparse.Namespace,
    cwd: Path,
    settings: Any,
    session_file: Path | None,
    trust: TrustResolver,
    directory: Path | None,
    prompts: PiArguments,
    new_id: str | None,
) -> int:
    import dataclasses
    import functools

    from ctxmodes.cli.options import (
        CONFIRM_SWITCH,
        configured_defaults,
        model_fallback_warning,
        settings_reader,
        start_model,
        use_api_key,
    )
    from ctxmodes.cli.session_warnings import warn_about_session
    from ctxmodes.config_reload import ReloadableSettings
    from ctxmodes.host.options import HostOptions
    from ctxmodes.sdk import open_agent
    from ctxmodes.tui.app import TerminalSession, tune_for_typing
    from ctxmodes.tui.prompt_history import PromptHistory
    from ctxmodes.tui.trust_question import ask_in_session

    defaults = configured_defaults(trust, cwd)
    # /reload reads them again as they were read here: same flags, same trust.
    reader = settings_reader(args, trust)
    options = HostOptions.of_settings(settings)
    options = dataclasses.replace(options, tools=tool_selection(args, options.tools))
    first = prompts.prompts(auto_resize_images=options.auto_resize_images)
    new_session = session_file is None and not args.continue_recent
    model = start_model(settings, given=args.model, new_session=new_session, provider=args.provider)
    use_api_key(args, model, settings)
    opened = functools.partial(
        open_agent,
        settings=settings,
        options=options,
        # --model wins over the session's own model; the configured one does not.
        model=model,
        session_file=session_file,
        continue_recent=args.continue_recent,
        persist=not args.no_session,
        session_id=new_id,
        session_dir=directory,
        mode=args.mode,
        thinking_level=args.thinking,
        switch_mode=args.switch_mode,
        confirm_hint=CONFIRM_SWITCH,
        resources=resource_loader(args, trust),
    )
    try:
        # A stored session runs where it records, as in Pi, unless --cwd names a directory.
        agent = opened(cwd=cwd if args.cwd is not None else None)
    except SessionCwdMissingError as missing:
        if not _continue_here(missing):
            return 0
        agent = opened(cwd=Path(missing.fallback_cwd))
    if args.name is not None:
        agent.set_name(args.name)
    # The session takes the terminal over: a second application cannot ask any more; the
    # session's own question asks instead (a project of a session taken up later).
    trust.ask = None
    try:
        manager = agent.session.session_manager
        if manager.session_file is not None:
            # Above the banner, as `run` and the session commands say it: no line of the
            # file is left out without a word.
            warn_about_session(manager.session_file, manager)
        fallback = model_fallback_warning(manager, agent.session.model, args.model)
        history = PromptHistory(history_path())
        warnings = [text for text in (fallback, history.problem) if text is not None]
        tune_for_typing()
        terminal = TerminalSession(
            agent,
            history=history,
            reloadable=ReloadableSettings(settings, reader, cwd),
            initial_prompts=first.texts,
            initial_images=first.images,
            model_patterns=settings.enabled_models,
            startup_warnings=warnings,
            verbose=bool(getattr(args, "verbose", False)),
            defaults=defaults,
            read_defaults=functools.partial(configured_defaults, trust),
            trust=trust,
        )
        trust.ask = ask_in_session(terminal)
        history.on_problem = lambda problem: terminal.call_soon(
            lambda: terminal.notify(problem, "warning")
        )
        terminal.run()
    finally:
        agent.close()
    return 0


def _continue_here(missing: SessionCwdMissingError) -> bool:
    """Whether to continue a session whose working directory is gone in the current one,
    as Pi asks."""
    from ctxmodes.tui.startup_picker import confirm

    return confirm(
        f"This session's working directory no longer exists:\n{missing.session_cwd}\n\n"
        f"Continue it in the current directory?\n{missing.fallback_cwd}",
        "Continue",
    )


def _fork_here(argument: str, elsewhere: str) -> bool:
    """Whether to fork another project's session into the working directory, as Pi asks
    when ``--session`` names one by its id."""
    from ctxmodes.tui.startup_picker import confirm

    return confirm(
        f"Session {argument} belongs to another project:\n{elsewhere}\n\n"
        "Fork it into the current directory?",
        "Fork",
    )
