"""``ctxmodes session``: look inside Pi session files.

* ``session list [--all] [--cwd DIR] [--json]`` lists the sessions Pi keeps for a working
  directory (or for every project), most recently active first.
* ``session show FILE [--full]`` draws the active path, one entry per line, with each side
  branch (an archived window) collapsed into one line; ``--full`` draws the whole tree.
* ``session export FILE [-o OUT.html]`` writes one self-contained HTML page of the session
  (see :mod:`ctxmodes.export`).
* ``session context FILE [--at ID|null] [--json] [--llm]`` prints what the model sees at the
  leaf, at entry ``ID``, or (``null``) before the first entry. ``--json`` prints the same
  object Pi's oracle script ``check_open.mjs`` reports for that position.

Files are opened read-only. Lines the session cannot use are reported on stderr (``--strict``
makes them an error).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, Final

from ctxmodes.cli.core_commands import add_command_parser
from ctxmodes.cli.options import add_session_dir_option

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager


def register(subparsers: Any) -> None:
    parser = add_command_parser(subparsers, "session")
    # Each action reads a session and writes its output, with nothing left open after it:
    # the program may end without the interpreter's teardown (see ctxmodes.cli.run).
    actions = parser.add_subparsers(dest="session_action", metavar="ACTION", required=True)

    listing = actions.add_parser(
        "list", help="list the Pi sessions of a working directory, most recent first"
    )
    listing.add_argument(
        "--cwd", metavar="DIR", help="the project directory (default: the current one)"
    )
    listing.add_argument("--all", action="store_true", help="sessions of every project")
    add_session_dir_option(listing)
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=run_list, ends_at_once=True)

    show = actions.add_parser(
        "show", help="draw the active path of a session, side branches collapsed"
    )
    show.add_argument("file", help="session file (.jsonl)")
    show.add_argument(
        "--full", action="store_true", help="draw the whole tree, every side branch expanded"
    )
    _add_strict(show)
    show.set_defaults(handler=run_show, ends_at_once=True)

    context = actions.add_parser("context", help="print the model's context at a position")
    context.add_argument("file", help="session file (.jsonl)")
    context.add_argument(
        "--at",
        metavar="ID",
        help="entry id to take as the leaf, or 'null' for before the first entry",
    )
    context.add_argument("--json", action="store_true", help="machine-readable output")
    context.add_argument(
        "--llm", action="store_true", help="show messages as the model receives them"
    )
    _add_strict(context)
    context.set_defaults(handler=run_context, ends_at_once=True)

    export = actions.add_parser("export", help="write the session as a self-contained HTML page")
    export.add_argument("file", help="session file (.jsonl)")
    export.add_argument(
        "-o", "--output", metavar="OUT", help="the page to write (default: FILE with .html)"
    )
    _add_strict(export)
    export.set_defaults(handler=run_export, ends_at_once=True)


def run_list(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ctxmodes.cli.options import command_settings, session_directory
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.terminal_text import visible

    cwd = Path(args.cwd).resolve() if args.cwd else Path.cwd()
    directory = session_directory(args, command_settings(args).settings)
    if args.all:
        infos = SessionManager.list_all(directory)
    else:
        infos = SessionManager.list_sessions(cwd, directory)
    if args.json:
        print(
            json.dumps(
                [info.model_dump(mode="json", exclude={"all_messages_text"}) for info in infos]
            )
        )
        return 0
    for info in infos:
        title = info.name or " ".join(info.first_message.split())[:60] or "(no messages)"
        modified = info.modified.astimezone().strftime("%Y-%m-%d %H:%M")
        print(f"{modified}  {info.message_count:>5} msgs  {visible(title)}")
        print(f"    {visible(str(info.path))}")
    if not infos:
        where = "any project" if args.all else str(cwd)
        print(f"no sessions for {where}", file=sys.stderr)
    return 0


def _add_strict(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strict", action="store_true", help="fail if any line of the file has to be skipped"
    )


def _open(path: str, strict: bool, *, preload: bool = True) -> SessionManager:
    """The session at ``path``, read-only, its problems reported (see ``SessionManager.open``
    for ``preload``: commands that read through the session once pass ``False``)."""
    from ctxmodes.cli import keep_to_the_end
    from ctxmodes.cli.session_warnings import warn_about_session
    from ctxmodes.errors import CtxmodesError
    from ctxmodes.session.manager import SessionManager

    manager = SessionManager.open(path, read_only=True, preload=preload)
    keep_to_the_end(manager)
    skipped = manager.skipped_lines
    if strict and skipped:
        manager.close()
        more = f" (and {len(skipped) - 1} more)" if len(skipped) > 1 else ""
        raise CtxmodesError(f"{path}: {skipped[0]}{more}")
    warn_about_session(path, manager)
    return manager


def run_show(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ctxmodes.cli.file_mode import file_mode, mode_words
    from ctxmodes.cli.session_drawing import draw_active_path, draw_tree, write_lines

    with _open(args.file, args.strict, preload=False) as manager:
        console = Console()
        header = manager.get_header_json()
        about = (
            f"  id {header.get('id')}  cwd {header.get('cwd')}  "
            f"mode {mode_words(file_mode(manager))}  "
            f"{manager.entry_count()} entries  leaf {manager.get_leaf_id()}"
        )
        # Whole however wide: the terminal wraps it.
        write_lines([[(args.file, "bold"), (about, "")]], console, fit=False)
        (draw_tree if args.full else draw_active_path)(manager, console)
    return 0


def run_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ctxmodes.cli.file_mode import file_mode, mode_words
    from ctxmodes.errors import CtxmodesError
    from ctxmodes.export import write_page

    source = Path(args.file)
    target = Path(args.output) if args.output else source.with_suffix(".html")
    if target.resolve() == source.resolve():
        raise CtxmodesError(f"{target}: refusing to overwrite the session file")
    with _open(args.file, args.strict, preload=False) as manager:
        write_page(manager, source.name, target, mode_words(file_mode(manager)))
    print(target)
    return 0


def run_context(args: argparse.Namespace) -> int:
    from ctxmodes.cli import collector_paused_to_the_end, keep_to_the_end

    if not args.json:
        from ctxmodes.session.report import context_report

        with _open(args.file, args.strict) as manager:
            report = context_report(manager, args.at, llm=args.llm)
        _print_context(report, args.llm)
        keep_to_the_end(report)
        return 0
    # One read of the file and one report streamed out, which make no reference cycles: the
    # cyclic collector would only walk the modules this imports and the index it builds
    # (some thirty collections, 3-7 ms of the command on a 100k-entry session).
    with collector_paused_to_the_end():
        from ctxmodes.session.report import write_context_report

        with _open(args.file, args.strict, preload=False) as manager:
            write_context_report(manager, sys.stdout.buffer.write, args.at, llm=args.llm)
    return 0


#: Messages laid out by rich in one call: one call per message cost ~180 µs each.
_MESSAGES_PER_PRINT: Final = 256


def _print_context(report: dict[str, Any], llm: bool) -> None:
    """Each message under a rule naming its role, characters that would steer the terminal
    written as escapes. On a terminal rich wraps the lines at words; into a file or a pipe
    they are written as they are, unbroken."""
    from rich.console import Console
    from rich.text import Text

    from ctxmodes.terminal_text import visible, visible_lines

    console = Console()
    unbroken = not console.is_terminal
    context = report["context"]
    messages = report["llm"] if llm else context["messages"]
    model = context.get("model") or {}
    heading = (
        f"leaf {report['leafId']}  thinking {context.get('thinkingLevel')}  "
        f"model {model.get('provider', '-')}/{model.get('modelId', '-')}  "
        f"{len(messages)} messages"
    )
    console.print(Text(visible(heading)), soft_wrap=unbroken)
    for first in range(0, len(messages), _MESSAGES_PER_PRINT):
        block = Text()
        for message in messages[first : first + _MESSAGES_PER_PRINT]:
            role = message.get("role") if isinstance(message, dict) else None
            block.append(f"── {visible(str(role))}\n", style="bold green")
            block.append(visible_lines(_message_text(message)) + "\n")
        console.print(block, end="", soft_wrap=unbroken)


def _message_text(message: Any) -> str:
    from ctxmodes.session import codec

    if not isinstance(message, dict):
        return codec.dumps(message).decode()
    if "summary" in message:
        return str(message["summary"])
    if message.get("role") == "bashExecution":
        return f"$ {message.get('command')}\n{message.get('output', '')}"
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            parts.append(str(block.get("text")))
        elif kind == "thinking":
            parts.append(f"(thinking) {block.get('thinking')}")
        elif kind == "toolCall":
            arguments = codec.dumps(block.get("arguments")).decode()
            parts.append(f"→ {block.get('name')}({arguments})")
        elif kind == "image":
            parts.append(f"[image {block.get('mimeType')}]")
        else:
            parts.append(codec.dumps(block).decode())
    return "\n".join(parts)
