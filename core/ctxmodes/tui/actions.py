"""What the terminal's own slash commands do. Each takes the session and the argument text;
anything that may take long (a navigation with a summary, a resume) runs on the agent's
worker, so the editor stays responsive."""

from __future__ import annotations

import base64
import contextlib
import json
import math
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ctxmodes.errors import CtxmodesError, SessionCwdMissingError
from ctxmodes.hostapi import NavigationRequest
from ctxmodes.pi_settings_save import save_choice
from ctxmodes.thinking_levels import THINKING_LEVELS
from ctxmodes.tui.key_hints import editor_hint, selector_hint
from ctxmodes.tui.model_picker import named_model, open_model_picker, save_as_default
from ctxmodes.tui.picker import Picker, PickerItem
from ctxmodes.tui.picker_keys import EDITOR_KEYS
from ctxmodes.tui.thinking_picker import open_thinking_picker

if TYPE_CHECKING:
    from ctxmodes.providers.catalog import ModelSpec
    from ctxmodes.tui.app import TerminalSession
    from ctxmodes.windows.tools import Family

#: Pi's words when a resume is not made.
RESUME_CANCELLED = "Resume cancelled"


# ----------------------------------------------------------------------------- /tree


def choose_summary(session: TerminalSession, target: str, reopen: Callable[[], None]) -> None:
    """After an entry other than the current one is picked in ``/tree``: leave the branch
    with or without a summary, as Pi asks, or, with ``branch_summary.skip_prompt`` (Pi's
    ``branchSummary.skipPrompt``), without asking and without one. Esc on the question
    goes back to the tree (``reopen``); Esc on the instructions, back to the question."""
    if session.agent.session.options.branch_summary.skip_prompt:
        _navigate(session, target, False, None, reopen)
        return
    choices = [
        PickerItem("none", "no summary", [("", "No summary")]),
        PickerItem("summary", "summarize", [("", "Summarize")]),
        PickerItem("custom", "custom", [("", "Summarize with custom prompt")]),
    ]

    def ask() -> None:
        session.open_picker(
            Picker(
                "Summarize branch?",
                lambda query: choices,
                picked,
                on_cancel=reopen,
                hint=selector_hint(session.keymap, "select"),
                counted=False,
            )
        )

    def picked(item: PickerItem) -> None:
        if item.key == "custom":
            instructions = Picker(
                "Custom summarization instructions",
                lambda query: [],
                # Trimmed, as Pi's editor submits its text.
                lambda typed: _navigate(session, target, True, typed.key.strip() or None, reopen),
                on_cancel=ask,
                hint=editor_hint(session.keymap),
                free_text=True,
                filterable=False,
                multiline=True,
                key_order=EDITOR_KEYS,
            )
            instructions.actions["app.editor.external"] = partial(
                edit_externally, session, instructions
            )
            session.open_picker(instructions)
            return
        _navigate(session, target, item.key == "summary", None, reopen)

    ask()


def edit_externally(session: TerminalSession, picker: Picker) -> None:
    """Ctrl+G (``app.editor.external``) in a multi-line picker: its text edited in the
    external editor the main editor's Ctrl+G opens, and taken back when the editor exits
    successfully, as Pi's ``ExtensionEditorComponent`` does."""
    from ctxmodes.tui.draft import DraftBuffer

    draft = DraftBuffer(session.buffer.editor, multiline=True)
    draft.text = picker.query

    def done(task: object) -> None:
        if session.picker is picker and draft.text != picker.query:
            picker.set_text(draft.text)
            session.app.invalidate()

    draft.open_in_editor().add_done_callback(done)


def _navigate(
    session: TerminalSession,
    target: str,
    summarize: bool,
    instructions: str | None,
    reopen: Callable[[], None],
) -> None:
    """Move to ``target``, on the worker. Chosen while the agent works, as in Pi: the
    queued messages go back to the editor and the run is aborted first, so its aborted
    reply is written where it was, and the move (and the summary, which reads that reply
    too) comes after it settled. A summary stopped with Esc opens the tree again, at
    ``target``, as Pi's does."""
    agent = session.agent
    if session.busy():
        steering, follow_up = agent.take_queued()
        session.restore_to_editor(steering + follow_up)
        agent.session.abort()

    def footer_settled() -> None:
        # The footer's "Summarizing branch..." ends with the move: no run settles after a
        # summary made for the user's own navigation.
        session.transcript.summarizing_branch = False
        if not agent.is_streaming():
            session.status.activity = None
            session.status.refresh()

    def job() -> None:
        try:
            result = agent.session.navigate_tree(
                NavigationRequest(target, summarize=summarize, custom_instructions=instructions)
            )
        finally:
            session.call_soon(footer_settled)
        if result.aborted:
            agent.session.ui.notify("Branch summarization cancelled")
            session.call_soon(reopen)
            return
        if result.cancelled:
            agent.session.ui.notify("Navigation cancelled")
            return
        if result.editor_text and not agent.session.ui.get_editor_text():
            agent.session.ui.set_editor_text(result.editor_text)
        agent.session.ui.notify("Navigated to selected point")

    session.transcript.summarizing_branch = summarize
    agent.run_soon(job)


def compact(session: TerminalSession, args: str) -> None:
    """``/compact [instructions]`` on the worker; the transcript shows the outcome once:
    a compaction that began says how it ended (failed or cancelled) when it ends."""
    from ctxmodes.sdk import SessionBusyError

    agent = session.agent

    def job() -> None:
        try:
            agent.compact(args or None)
        except SessionBusyError:
            raise  # refused before it began
        except CtxmodesError:
            pass  # the compaction's end said why

    agent.run_soon(job)


def shell(session: TerminalSession, command: str, *, exclude: bool) -> None:
    """``!cmd`` (the output goes to the model with the next prompt) and ``!!cmd`` (it does
    not): run as Pi runs them (:meth:`~ctxmodes.host.session.AgentSession.run_shell_command`,
    which asks the plugins' ``ctx_user_bash`` first) on the worker; Esc stops it. The
    command is recorded as typed.

    Typed while the agent works, the command runs at once beside it, as in Pi: it waits
    among the queued messages until the host records it, when the run ends."""
    import threading

    from ctxmodes.abort import AbortController

    agent = session.agent
    controller = AbortController()
    session.shell_abort = controller

    def job() -> None:
        try:
            agent.session.run_shell_command(
                command, exclude_from_context=exclude, controller=controller
            )
        except CtxmodesError as exc:
            # Pi's words for a command that could not run (nothing of it is recorded).
            raise CtxmodesError(f"Bash command failed: {exc}") from None
        finally:
            session.shell_abort = None

    if not session.busy():
        agent.run_soon(job)
        return
    beside = session.live.shell_beside
    beside.append(command)

    def job_beside() -> None:
        try:
            job()
        except CtxmodesError as exc:
            message = str(exc)

            def failed() -> None:
                with contextlib.suppress(ValueError):
                    beside.remove(command)
                session.notify(message, "error")

            session.call_soon(failed)

    threading.Thread(target=job_beside, name="ctxmodes-shell", daemon=True).start()


# ----------------------------------------------------------------------------- sessions


def resume(session: TerminalSession, args: str) -> None:
    """``/resume FILE`` resumes it; ``/resume`` opens the picker."""
    if args:
        _resume_file(session, Path(args).expanduser())
        return
    from ctxmodes.session.paths import cwd_filter
    from ctxmodes.tui.resume import ResumePicker, every_folder_root

    manager = session.agent.session_manager
    directory = manager.session_dir
    if directory is None:
        session.notify("This session is not stored in a directory; give /resume a FILE", "warning")
        return
    picker = ResumePicker(
        directory,
        lambda path: _resume_file(session, path),
        cwd=cwd_filter(manager.cwd, directory),
        every_folder=every_folder_root(manager.cwd, directory),
        wake=session.wake,
        current=manager.session_file,
        rename_current=lambda name: _name_live_session(session, name),
        keymap=session.keymap,
    )
    session.open_picker(picker.picker)


def _name_live_session(session: TerminalSession, name: str) -> None:
    """Name the session being run as ``/name`` does (its writer holds the file), saying it
    in the footer rather than in the scrollback, as the picker shows it already."""
    agent = session.agent

    def job() -> None:
        agent.set_name(name)
        session.call_soon(session.status.refresh)
        session.wake()

    agent.run_soon(job)


def _resume_file(session: TerminalSession, path: Path, cwd: Path | None = None) -> None:
    """Resume the session at ``path``, in ``cwd`` when given (else where it records; when
    that is gone, the user is asked whether to continue it here)."""
    agent = session.agent

    def job() -> None:
        from ctxmodes.cli.session_warnings import session_warnings
        from ctxmodes.tui.missing_cwd import ask_to_continue_here
        from ctxmodes.tui.project_settings import decide_trust

        decide_trust(session, path, cwd)
        try:
            agent.resume(path, cwd=cwd)
        except SessionCwdMissingError as missing:
            ask_to_continue_here(
                session, missing, partial(_resume_file, session, path), RESUME_CANCELLED
            )
            return
        manager = agent.session_manager
        for line in session_warnings(path, manager):
            agent.session.ui.notify(line, "warning")
        agent.session.ui.notify(f"Resumed session {manager.session_id}")

    agent.run_soon(job)


def mode(session: TerminalSession, args: str) -> None:
    """``/mode NAME``: a session keeps the mode it records, so a switch is explicit — the
    prompt says in one line what changes for this session, and nothing switches until
    "switch" is chosen. Before the first message there is nothing to change, and the mode
    switches at once."""
    agent = session.agent
    if not args:
        installed = ", ".join(agent.host.mode_names())
        session.notify(f"Mode: {agent.mode} (installed: {installed})")
        return
    try:
        change = agent.host.describe_mode_change(args)
    except CtxmodesError as exc:
        session.notify(str(exc), "error")
        return
    if change is None:
        session.notify(f"Mode: {args} already manages this session")
        return
    current = agent.mode

    def switch() -> None:
        def job() -> None:
            agent.switch_mode(args)
            agent.session.ui.notify(f"Mode: {args}")

        agent.run_soon(job)

    if not agent.session.messages:
        switch()  # no conversation yet: the switch changes nothing to ask about
        return

    def chosen(item: PickerItem) -> None:
        if item.key != "switch":
            session.notify(f"Mode unchanged: {current}")
            return
        switch()

    rows = [
        PickerItem("switch", f"switch to {args}", [("", f"Switch to {args}")]),
        PickerItem("stay", f"stay in {current}", [("", f"Stay in {current}")]),
    ]
    session.open_picker(
        Picker(
            change[:1].upper() + change[1:],
            lambda query: [row for row in rows if query.lower() in row.text],
            chosen,
            hint=selector_hint(session.keymap, "select"),
            counted=False,
        )
    )


def model(session: TerminalSession, args: str) -> None:
    """``/model TEXT`` switches to the model TEXT names exactly, else opens the picker with
    TEXT searched; ``/model`` picks from the scope or the models with credentials (see
    :mod:`~ctxmodes.tui.model_picker`)."""
    agent = session.agent

    def switch(spec: str) -> None:
        def job() -> None:
            agent.switch_model(spec)
            current = agent.session.model
            # Pi names the model by its id alone here; the footer shows its provider.
            agent.session.ui.notify(f"Model: {spec if current is None else current.id}")

        agent.change_soon(job)

    def switch_as_default(model: ModelSpec) -> None:
        def job() -> None:
            agent.switch_model(model.ref)  # a model it cannot switch to is not saved either
            save_as_default(session, model)
            agent.session.ui.notify(f"Default model: {model.ref}")

        agent.change_soon(job)

    spec = named_model(session, args) if args else None
    if spec is not None:
        switch(spec)
        return
    open_model_picker(session, switch, switch_as_default, args)


def thinking(session: TerminalSession, args: str) -> None:
    """``/thinking [LEVEL]``: change the thinking level (recorded in the session); without
    one, Pi's selector (see :mod:`~ctxmodes.tui.thinking_picker`)."""
    agent = session.agent
    if not args:

        def select(level: str, *, as_default: bool = False) -> None:
            def job() -> None:
                agent.set_thinking_level(level)
                notify = agent.session.ui.notify
                if not as_default:
                    notify(f"Thinking level: {level}")
                    return
                saved = [(("defaultThinkingLevel",), level)]
                if save_choice(saved, notify, session.defaults.origins):
                    session.defaults.thinking_level = level
                notify(f"Default thinking level: {level}")

            agent.change_soon(job)

        open_thinking_picker(session, select, lambda level: select(level, as_default=True))
        return

    # As Pi: a level the model takes, in any case; any other is refused, naming those it does.
    model = agent.session.model
    levels = THINKING_LEVELS if model is None else model.capabilities.supported_thinking_levels()
    level = next((known for known in levels if known.lower() == args.lower()), None)
    if level is None:
        available = ", ".join(levels)
        session.notify(f'Unknown thinking level "{args}". Available levels: {available}.', "error")
        return

    def job() -> None:
        agent.set_thinking_level(level)
        agent.session.ui.notify(f"Thinking level: {level}")

    agent.change_soon(job)


def name(session: TerminalSession, args: str) -> None:
    """``/name [NAME]``, in Pi's words: the name set (and how it was normalized, line
    breaks being spaces in a name), or without one the current name."""
    agent = session.agent
    if not args:
        current = agent.session_manager.get_session_name()
        if current:
            session.notify(f"Session name: {current}")
        else:
            session.notify("Usage: /name <name>", "warning")
        return

    def job() -> None:
        agent.set_name(args)
        named = agent.session_manager.get_session_name()
        notify = agent.session.ui.notify
        if named != args:
            as_typed, as_kept = (json.dumps(text, ensure_ascii=False) for text in (args, named))
            notify(f"Session name was normalized from {as_typed} to {as_kept}", "warning")
        notify(f"Session name set: {named or args}")

    agent.change_soon(job)


def quit(session: TerminalSession, args: str) -> None:
    session.exit()


def copy(session: TerminalSession, args: str) -> None:
    """The last reply to the clipboard with OSC 52 (works over ssh and in tmux with
    ``set-clipboard on``), said in Pi's words; no dependency."""
    text = session.transcript.last_reply
    if not text:
        session.notify("No agent messages to copy yet.", "error")
        return
    copy_to_clipboard(session, text)
    session.notify("Copied last agent message to clipboard")


def copy_to_clipboard(session: TerminalSession, text: str) -> None:
    """``text`` to the clipboard with OSC 52, which the terminal carries out (over ssh too,
    and in tmux with ``set-clipboard on``)."""
    payload = base64.b64encode(text.encode()).decode()
    session.app.output.write_raw(f"\x1b]52;c;{payload}\x07")
    session.app.output.flush()


def export(session: TerminalSession, args: str) -> None:
    """``/export [FILE]``, as Pi's: the session's page, by default Pi's
    ``pi-session-<file name>.html`` in the working directory; a ``FILE.jsonl``, the active
    branch as a session file of its own (also of a session kept in memory only)."""
    from ctxmodes.export import default_page_name, export_session
    from ctxmodes.session.branch_export import write_branch

    source = session.agent.session_file
    target = Path(args).expanduser() if args else None
    try:
        if target is not None and target.name.endswith(".jsonl"):
            target = target.absolute()  # named in full, as Pi names it
            write_branch(session.agent.session_manager, target)
        elif source is None or not source.exists():
            session.notify("Nothing is stored yet to export", "warning")
            return
        else:
            target = target or Path(default_page_name(source))
            # Streamed into a new file that replaces the target only once the page is whole.
            export_session(source, target, session.agent.mode)
    except (OSError, CtxmodesError) as exc:
        session.notify(f"Failed to export session: {exc}", "error")
        return
    session.notify(f"Session exported to: {target}")


# ----------------------------------------------------------------------------- reports


def session_info(session: TerminalSession, args: str) -> None:
    """Pi's ``/session`` report, then the session's mode, window, archives and notes."""
    from ctxmodes.export.view import ARCHIVE_TYPE, NOTE_TYPE
    from ctxmodes.host.usage_breakdown import cache_read_prices, cache_waste, usage_breakdown
    from ctxmodes.session.models import CustomEntry
    from ctxmodes.tui.session_report import ModeFacts, session_report

    agent = session.agent
    manager = agent.session_manager
    entries = manager.get_entries()
    archives = notes = 0
    for entry in entries:
        if isinstance(entry, CustomEntry):
            archives += entry.custom_type == ARCHIVE_TYPE
            notes += entry.custom_type == NOTE_TYPE
    state = agent.context_state()
    model = agent.session.model
    facts = ModeFacts(
        model="-" if model is None else f"{model.provider}/{model.id}",
        mode=agent.mode,
        window=state.window,
        tokens_left=state.tokens_left,
        usable_tokens=state.usable_tokens,
        archived_windows=archives,
        note_writes=notes,
        entries=manager.entry_count(),
    )
    report = session_report(
        agent.session.session_stats(),
        manager.get_session_name(),
        usage_breakdown(entries),
        cache_waste(entries, cache_read_prices(agent.models())),
        facts,
    )
    session.notify(report)


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def context_breakdown(session: TerminalSession, args: str) -> None:
    """What the next request holds, from the last request sent plus what came after it
    (estimated at four characters a token), and the archived windows the model does not see."""
    from ctxmodes.export.view import ARCHIVE_TYPE
    from ctxmodes.providers.base import DeveloperMessage

    agent = session.agent
    request = session.transcript.last_request
    state = agent.context_state()
    if request is None:
        session.notify(
            "No request was sent in this session yet; /context reports after the first one"
        )
        return
    system = _tokens(len(request.system_prompt))
    tools = _tokens(sum(len(json.dumps(tool.model_dump(mode="json"))) for tool in request.tools))
    developer = [m for m in request.messages if isinstance(m, DeveloperMessage)]
    marker = _tokens(sum(len(m.text) for m in developer))
    others = [m for m in request.messages if not isinstance(m, DeveloperMessage)]
    message_tokens = _tokens(sum(len(m.model_dump_json()) for m in others))
    used = system + tools + marker + message_tokens
    free = max(
        0, state.usable_tokens - (state.used_tokens if state.used_tokens is not None else used)
    )
    archived = sum(
        1
        for entry_id in agent.session_manager.get_branch_ids()
        if (agent.session_manager.get_entry_json(entry_id) or {}).get("customType") == ARCHIVE_TYPE
    )
    lines = [
        "Next request (as of the last one sent; estimates at 4 characters a token):",
        f"  system prompt      ~{system} tokens",
        f"  tools ({len(request.tools):>2})         ~{tools} tokens",
        f"  marker and hint    ~{marker} tokens ({len(developer)} developer message(s))",
        f"  messages ({len(others):>3})     ~{message_tokens} tokens",
        f"  free               {free} of {state.usable_tokens} usable"
        + (" (reported)" if state.used_tokens is not None else " (estimated)"),
        f"Archived windows on this path the model does not see: {archived} "
        "(read them with /history)",
    ]
    session.notify("\n".join(lines))


def _retrieve(session: TerminalSession, family: str, args: str) -> None:
    from ctxmodes.cli.retrieval_cmd import check_action, parse_arguments
    from ctxmodes.events import RetrievalRequest

    words = args.split()
    if not words:
        from ctxmodes.cli.retrieval_cmd import READ_ACTIONS

        actions = ", ".join(READ_ACTIONS[cast("Family", family)])
        session.notify(f"usage: /{family} ACTION [NAME=VALUE...] · actions: {actions}")
        return
    action, pairs = words[0], words[1:]
    agent = session.agent
    try:
        check_action(cast("Family", family), action)
        arguments = parse_arguments(cast("Family", family), action, pairs)
    except CtxmodesError as exc:
        session.notify(str(exc), "error")
        return
    request = RetrievalRequest(family=cast("Family", family), action=action, arguments=arguments)
    result = agent.retrieve(request)
    if result is None:
        session.notify(f"mode {agent.mode!r} keeps no {family}", "warning")
        return
    try:
        text = json.dumps(json.loads(result.text), indent=2, ensure_ascii=False)
    except json.JSONDecodeError:
        text = result.text
    session.notify(text, "error" if result.is_error else "info")


def history(session: TerminalSession, args: str) -> None:
    _retrieve(session, "history", args)


def notes(session: TerminalSession, args: str) -> None:
    _retrieve(session, "notes", args)
