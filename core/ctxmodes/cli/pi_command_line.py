"""Pi's own command line, for hands and scripts used to ``pi``.

``ctxmodes -p PROMPT`` (or any prompt without a command while standard input or output is
not a terminal, or a bare command line with standard input piped in: ``git diff | ctxmodes``)
is Pi's print mode: ``ctxmodes run --print``, which prints the last reply's
text and nothing else. ``ctxmodes PROMPT`` on a terminal opens the interactive session and
sends it. Either way, arguments starting with ``@`` are files whose text goes into the
first prompt, after what was piped into standard input, as Pi builds its first message; an
image file is attached to it. ``ctxmodes --list-models [SEARCH]`` is ``ctxmodes models
--pi-list [--search SEARCH]``, and ``ctxmodes --export FILE [OUTPUT]`` is ``ctxmodes session
export``.

``--mode`` on this bare line is Pi's output mode, not a context mode: ``--mode json`` (or
``--mode=json``) is Pi's JSON event stream, ``ctxmodes run --json``; ``--mode text`` is Pi's
default output and changes nothing; ``--mode rpc`` is Pi's RPC mode, ``ctxmodes run --rpc``
(see :mod:`ctxmodes.rpc`). Any other value is still the
context mode, so a plugin's context mode named ``json`` or ``text`` is chosen with
``ctxmodes run --mode NAME`` (or ``chat --mode NAME``).

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ctxmodes.errors import CtxmodesError
from ctxmodes.tools._images import SNIFF_BYTES, image_mime_type

if TYPE_CHECKING:
    from ctxmodes.session.models import ImageContent

#: Pi's print-mode flags.
PRINT_FLAGS = frozenset({"-p", "--print"})
#: Pi's end of options: what follows is prompts.
END_OF_OPTIONS = "--"
#: Pi's ``--export FILE [OUTPUT]``: the session's HTML page, and nothing else.
EXPORT = "--export"
#: The options of the session commands that take a value, which a bare ``ctxmodes`` takes
#: too (so that the value is not read as a command or a prompt).
VALUE_OPTIONS = frozenset(
    {"--session", "--model", "--provider", "--models", "--mode", "--cwd", "--thinking"}
    | {"--session-dir"}
    | {"--skill", "--prompt-template", "-n", "--name", "--session-id"}
    | {"-t", "--tools", "-xt", "--exclude-tools", "--system-prompt", "--append-system-prompt"}
    | {"--fork", "--api-key", EXPORT}
    | {"-e", "--extension", "--theme", "--use-theme", "--tui-mode"}
)
#: Pi's output-mode option, which the session commands' ``--mode`` (the context mode) shares.
MODE = "--mode"
#: The values of ``--mode`` that name Pi's output, and what each runs.
OUTPUT_MODES: dict[str, list[str]] = {
    "json": ["run", "--json"],
    "rpc": ["run", "--rpc"],
    "text": [],
}
#: Pi's ``--list-models [SEARCH]``: the models with credentials, those matching SEARCH.
LIST_MODELS = "--list-models"
#: Pi's project-trust flags, which decide whether a project's own providers are read.
TRUST_FLAGS = frozenset({"-a", "--approve", "-na", "--no-approve"})
#: What a bare ``ctxmodes`` answers itself, wherever among the options: its version (which
#: goes first, as in Pi), else its help.
VERSION_FLAGS = frozenset({"-v", "--version"})
OWN_OPTIONS = frozenset({"-h", "--help"}) | VERSION_FLAGS
#: Pi's commands for its packages and its own update, which Pi runs when one is the first
#: argument: ctxmodes has neither, and sent as a prompt the words would ask a coding agent
#: to install or remove something, so each is refused, saying what to do instead.
PI_ONLY_COMMANDS: dict[str, str] = {
    **dict.fromkeys(
        ("install", "remove", "uninstall", "list"),
        "is Pi's package command: ctxmodes installs no Pi packages (its modes are Python "
        "packages: `pip install NAME`, and `ctxmodes modes` lists them)",
    ),
    "update": "is Pi's self-update: ctxmodes and its model catalog are updated by what "
    "installed them (`pip install --upgrade ctxmodes`)",
}


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
    argv: Sequence[str],
    *,
    is_command: Callable[[str], bool],
    terminal: bool,
    piped: bool = False,
) -> list[str] | None:
    """The ctxmodes command line a Pi-style ``argv`` means (``None``: ``argv`` names a
    command, or is empty and nothing is piped in).

    :param terminal: standard input and output are both terminals.
    :param piped: standard input is not a terminal: what it holds is the first prompt's
        beginning, and the command line is print mode, as Pi's is (``echo hi | pi``).
    """
    own = OWN_OPTIONS.intersection(_options(argv))
    if own:
        named = named_command(argv)
        version = bool(own & VERSION_FLAGS)
        # A command's own help; and `WORD --help` first on the line is a command asked about,
        # which the parser says it lacks (naming those it has).
        if named is not None and (is_command(named) or (argv[0] == named and not version)):
            return None
        return ["--version"] if version else ["--help"]
    if not argv:
        return ["run", "--print"] if piped else None
    named = named_command(argv)
    if EXPORT in _options(argv):
        return _export(argv, named)
    listing = _list_models(argv)
    if listing is not None:
        return listing
    printing = bool(PRINT_FLAGS.intersection(_options(argv)))
    if named is not None and is_command(named) and not _print_flag_before(argv, named):
        return None
    _refuse_a_pi_only_command(argv[0])
    output, argv = _output_mode(argv)
    if output in ("json", "rpc"):
        return [*OUTPUT_MODES[output], *_without_print_flags(argv)]
    if named is not None and not printing:
        _refuse_a_mistyped_command(named, is_command)
    kept = _without_print_flags(argv)
    # As Pi: without a terminal at both ends, a prompt, or what is piped in, is print mode.
    # Chat's options alone with nothing piped in (only the output redirected) stay the
    # interactive session, which says it needs a terminal.
    has_prompt = named is not None or END_OF_OPTIONS in argv
    to_print = printing or piped or (has_prompt and not terminal)
    return ["run", "--print", *kept] if to_print else ["chat", *kept]


def _output_mode(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """Pi's output mode (the last ``--mode json|rpc|text`` given, ``None``: none) and
    ``argv`` without those options; any other ``--mode`` stays, as the context mode."""
    chosen: str | None = None
    rest: list[str] = []
    consumed = 0
    for argument, value in _options_and_values(argv):
        consumed += 1 if value is None else 2
        mode = value if argument == MODE else None
        if argument.startswith(f"{MODE}="):
            mode = argument.removeprefix(f"{MODE}=")
        if mode in OUTPUT_MODES:
            chosen = mode
        else:
            rest += [argument] if value is None else [argument, value]
    return chosen, rest + list(argv[consumed:])


def _without_print_flags(argv: Sequence[str]) -> list[str]:
    """``argv`` without Pi's print flags among its options."""
    kept = [argument for argument in _options(argv) if argument not in PRINT_FLAGS]
    return kept + list(argv[len(_options(argv)) :])


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


def _refuse_a_pi_only_command(first: str) -> None:
    """Pi's commands ctxmodes does not have (see :data:`PI_ONLY_COMMANDS`), which Pi reads
    only as the first argument, as here.

    :raises CtxmodesError: ``first`` is one of them.
    """
    said = PI_ONLY_COMMANDS.get(first)
    if said is not None:
        raise CtxmodesError(
            f"`ctxmodes {first}` {said}; to send {first!r} as a prompt, put -- before it"
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


@dataclass(frozen=True, slots=True)
class PiPrompts:
    """The prompts a Pi-style command line sends, in order, and the images attached to the
    first one (as Pi attaches them: after its text, in the order of the ``@FILE``
    arguments)."""

    texts: tuple[str, ...]
    images: tuple[ImageContent, ...] = ()


@dataclass(frozen=True, slots=True)
class PiArguments:
    """A Pi-style command line's prompts as read, before its images are made to fit (which
    waits for the settings): standard input (trimmed), each ``@FILE``'s absolute path and
    content, and the messages."""

    piped: str
    files: tuple[tuple[Path, bytes], ...]
    messages: tuple[str, ...]

    @property
    def sends_nothing(self) -> bool:
        """No text on standard input, no ``@FILE`` with content, and no message."""
        return not (self.piped or self.messages or any(data for _, data in self.files))

    def prompts(self, *, auto_resize_images: bool = True) -> PiPrompts:
        """The prompts, as Pi builds them (see :func:`pi_prompts`); ``auto_resize_images``
        is Pi's ``images.autoResize``."""
        parts = [self.piped] if self.piped else []
        blocks: list[str] = []
        images: list[ImageContent] = []
        for path, data in self.files:
            block, image = _file_part(path, data, auto_resize_images)
            blocks.append(block)
            if image is not None:
                images.append(image)
        text = "".join(blocks)
        if text:
            parts.append(text)
        messages = list(self.messages)
        if messages:
            parts.append(messages.pop(0))
        first = ["".join(parts)] if parts else []
        return PiPrompts(tuple(first + messages), tuple(images))


def read_pi_arguments(arguments: Sequence[str], *, piped: str | None, base: Path) -> PiArguments:
    """The prompts of ``arguments`` as read (see :func:`pi_prompts`).

    :raises CtxmodesError: a file that does not exist or cannot be read.
    """
    files = [argument[1:] for argument in arguments if argument.startswith("@")]
    messages = tuple(argument for argument in arguments if not argument.startswith("@"))
    stripped = (piped or "").strip().strip("\ufeff")
    return PiArguments(stripped, tuple(_read_file(name, base) for name in files), messages)


def pi_prompts(
    arguments: Sequence[str], *, piped: str | None, base: Path, auto_resize_images: bool = True
) -> PiPrompts:
    """The prompts a Pi-style command line sends: ``@FILE`` arguments (relative to
    ``base``; ``~`` expanded) become ``<file name="...">`` blocks of the first prompt, after
    ``piped`` (standard input, trimmed; ``None`` or empty: none) and before the first
    message, as Pi builds its first message; an empty file adds nothing. An image file (by
    its content, as the ``read`` tool tells them) is made to fit what models take, as Pi
    makes it (:mod:`ctxmodes.tools.image_fit`; ``auto_resize_images`` is Pi's
    ``images.autoResize``), and attached to the first prompt, its block holding Pi's notes
    on what was done (a conversion, a resize), empty when nothing was; one that cannot be
    made to fit is not attached, and its block says so in Pi's words.

    :raises CtxmodesError: a file that does not exist or cannot be read.
    """
    read = read_pi_arguments(arguments, piped=piped, base=base)
    return read.prompts(auto_resize_images=auto_resize_images)


def _read_file(name: str, base: Path) -> tuple[Path, bytes]:
    path = (base / Path(name).expanduser()).resolve()
    try:
        return path, path.read_bytes()
    except FileNotFoundError:
        raise CtxmodesError(f"file not found: {path}") from None
    except OSError as exc:
        raise CtxmodesError(f"could not read file {path}: {exc.strerror or exc}") from None


def _file_part(path: Path, data: bytes, auto_resize: bool) -> tuple[str, ImageContent | None]:
    """The block a file adds to the first prompt, and the image it attaches."""
    if not data:
        return "", None
    mime_type = image_mime_type(data[:SNIFF_BYTES])
    if mime_type is None:
        content = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
        return f'<file name="{path}">\n{content}\n</file>\n', None
    # Here, not above: every start reads this module, and these bring pydantic and Pillow.
    from ctxmodes.session.models import ImageContent
    from ctxmodes.tools.image_fit import OmittedImage, fit_image

    fitted = fit_image(data, mime_type, auto_resize=auto_resize)
    if isinstance(fitted, OmittedImage):
        return f'<file name="{path}">{fitted.message}</file>\n', None
    # Keys in the order Pi writes an attached image: mimeType, then data.
    image = ImageContent(mime_type=fitted.mime_type, data=fitted.data)
    hints = "\n".join(fitted.hints)
    return f'<file name="{path}">{hints}</file>\n', image


def piped_input() -> str | None:
    """What was piped into standard input (read to its end), or ``None`` on a terminal."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    return sys.stdin.buffer.read().decode("utf-8", errors="replace")
