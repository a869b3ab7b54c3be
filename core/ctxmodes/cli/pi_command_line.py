"""Pi's own command line, for hands and scripts used to ``pi``.

``ctxmodes -p PROMPT`` (or any prompt without a command while standard input or output is
not a terminal) is Pi's print mode: ``ctxmodes run --print``, which prints the last reply's
text and nothing else. ``ctxmodes PROMPT`` on a terminal opens the interactive session and
sends it. Either way, arguments starting with ``@`` are files whose text goes into the
first prompt, after what was piped into standard input, as Pi builds its first message.
``ctxmodes --list-models [SEARCH]`` is ``ctxmodes models --pi-list [--search SEARCH]``, and
``ctxmodes --export FILE [OUTPUT]`` is ``ctxmodes session export``.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ctxmodes.errors import CtxmodesError

#: Pi's print-mode flags.
PRINT_FLAGS = frozenset({"-p", "--print"})
#: Pi's end of options: what follows is prompts.
END_OF_OPTIONS = "--"
#: Pi's ``--export FILE [OUTPUT]``: the session's HTML page, and nothing else.
EXPORT = "--export"
#: The options of the session commands that take a value, which a bare ``ctxmodes`` takes
#: too (so that the value is not read as a command or a prompt).
VALUE_OPTIONS = frozenset(
    {"--session", "--model", "--models", "--mode", "--cwd", "--thinking", "--session-dir"}
    | {"--skill", "--prompt-template", "-n", "--name", "--session-id"}
    | {"-t", "--tools", "-xt", "--exclude-tools", "--system-prompt", "--append-system-prompt"}
    | {"--fork", "--api-key", EXPORT}
)
#: Pi's ``--list-models [SEARCH]``: the models with credentials, those matching SEARCH.
LIST_MODELS = "--list-models"
#: Pi's project-trust flags, which decide whether a project's own providers are read.
TRUST_FLAGS = frozenset({"-a", "--approve", "-na", "--no-approve"})
#: What a bare ``ctxmodes`` answers itself.
OWN_OPTIONS = frozenset({"-h", "--help", "--version"})
#: The bytes that start an image Pi attaches rather than reads as text.
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")


def named_command(argv: Sequence[str]) -> str | None:
    """The first argument that is neither an option nor the value of one, before ``--``
    (``None``: there is none)."""
    for argument, value in _options_and_values(argv):
        if value is None and not argument.startswith("-"):
            return argument
    return None


def _options_and_values(argv: Sequence[str]) -> Iterator[tuple[str, str | None]]:
    """Each argument before ``--``, with the value it takes (``None``: it takes none)."""
    at = 0
    while at < len(argv) and argv[at] != END_OF_OPTIONS:
        argument = argv[at]
        following = argv[at + 1] if at + 1 < len(argv) else None
        takes_value = argument in VALUE_OPTIONS or (
            argument == LIST_MODELS and following is not None and _is_search(following)
        )
        value = following if takes_value else None
        yield argument, value
        at += 1 if value is None else 2


def _is_search(argument: str) -> bool:
    """Whether the argument after ``--list-models`` is its search, as Pi decides: anything
    but an option or an ``@FILE``."""
    return not argument.startswith(("-", "@"))


def meant_command_line(
    argv: Sequence[str], *, is_command: Callable[[str], bool], terminal: bool
) -> list[str] | None:
    """The ctxmodes command line a Pi-style ``argv`` means (``None``: ``argv`` names a
    command, or asks ``ctxmodes`` itself for help or its version).

    :param terminal: standard input and output are both terminals.
    """
    if OWN_OPTIONS.intersection(_options(argv)):
        return None
    named = named_command(argv)
    if EXPORT in _options(argv):
        return _export(argv, named)
    listing = _list_models(argv)
    if listing is not None:
        return listing
    printing = bool(PRINT_FLAGS.intersection(_options(argv)))
    if not argv or (
        named is not None and is_command(named) and not _print_flag_before(argv, named)
    ):
        return None
    if named is not None and not printing:
        _refuse_a_mistyped_command(named, is_command)
    kept = [argument for argument in _options(argv) if argument not in PRINT_FLAGS]
    kept += list(argv[len(_options(argv)) :])
    # As Pi: a prompt without a terminal at both ends is print mode too. Chat's options
    # alone stay the interactive session, which says it needs a terminal.
    has_prompt = named is not None or END_OF_OPTIONS in argv
    return (
        ["run", "--print", *kept] if printing or (has_prompt and not terminal) else ["chat", *kept]
    )


def _export(argv: Sequence[str], output: str | None) -> list[str]:
    """``session export``, as Pi's ``--export FILE [OUTPUT]`` (its other options unused).

    :raises CtxmodesError: no file after ``--export``.
    """
    at = list(argv).index(EXPORT)
    if at + 1 >= len(argv):
        raise CtxmodesError("--export needs the session file to export")
    return ["session", "export", argv[at + 1], *(["-o", output] if output else [])]


def _list_models(argv: Sequence[str]) -> list[str] | None:
    """``models --pi-list``, as Pi's ``--list-models [SEARCH]`` (``None``: not asked for).
    As in Pi, the last ``--list-models`` counts, and the other options and any prompt are
    left unused, but for the project-trust flags.
    """
    asked = False
    search: str | None = None
    trust: list[str] = []
    for argument, value in _options_and_values(argv):
        if argument == LIST_MODELS:
            asked, search = True, value
        elif argument in TRUST_FLAGS:
            trust = [argument]  # the last one, as each overrides the one before
    if not asked:
        return None
    return ["models", "--pi-list", *trust, *(["--search", search] if search else [])]


def _refuse_a_mistyped_command(word: str, is_command: Callable[[str], bool]) -> None:
    """A one-word prompt spelled almost like a command is taken for a mistyped command: sent
    to the model it would cost a request and do nothing the user meant.

    :raises CtxmodesError: naming the command meant, and how to send the word anyway.
    """
    import difflib

    if any(character.isspace() for character in word):
        return
    from ctxmodes.cli.core_commands import CORE_COMMANDS

    names = [name for name in CORE_COMMANDS if is_command(name)]
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.75)
    if close:
        raise CtxmodesError(
            f"unknown command {word!r} (did you mean {close[0]!r}?); to send it as a prompt, "
            f"put -- before it"
        )


def _options(argv: Sequence[str]) -> list[str]:
    """The arguments before ``--``."""
    arguments = list(argv)
    return (
        arguments[: arguments.index(END_OF_OPTIONS)] if END_OF_OPTIONS in arguments else arguments
    )


def _print_flag_before(argv: Sequence[str], named: str) -> bool:
    before = list(argv)[: list(argv).index(named)]
    return bool(PRINT_FLAGS.intersection(before))


def pi_prompts(arguments: Sequence[str], *, piped: str | None, base: Path) -> list[str]:
    """The prompts a Pi-style command line sends: ``@FILE`` arguments (relative to
    ``base``; ``~`` expanded) become ``<file name="...">`` blocks of the first prompt, after
    ``piped`` (standard input, trimmed; ``None`` or empty: none) and before the first
    message, as Pi builds its first message; an empty file adds nothing. An image file is
    named in an empty block (ctxmodes' prompts carry text: the model opens it with
    ``read``).

    :raises CtxmodesError: a file that does not exist or cannot be read.
    """
    files = [argument[1:] for argument in arguments if argument.startswith("@")]
    messages = [argument for argument in arguments if not argument.startswith("@")]
    stripped = (piped or "").strip().strip("\ufeff")
    parts = [stripped] if stripped else []
    text = "".join(_file_block(name, base) for name in files)
    if text:
        parts.append(text)
    if messages:
        parts.append(messages.pop(0))
    first = ["".join(parts)] if parts else []
    return first + messages


def _file_block(name: str, base: Path) -> str:
    path = (base / Path(name).expanduser()).resolve()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CtxmodesError(f"file not found: {path}") from None
    except OSError as exc:
        raise CtxmodesError(f"could not read file {path}: {exc.strerror or exc}") from None
    if not data:
        return ""
    if data.startswith(_IMAGE_MAGIC) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
        return f'<file name="{path}"></file>\n'
    content = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    return f'<file name="{path}">\n{content}\n</file>\n'


def piped_input() -> str | None:
    """What was piped into standard input (read to its end), or ``None`` on a terminal."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    return sys.stdin.buffer.read().decode("utf-8", errors="replace")
