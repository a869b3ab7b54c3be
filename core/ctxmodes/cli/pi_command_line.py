"""Pi's own command line, for hands and scripts used to ``pi``.

``ctxmodes -p PROMPT`` (or any prompt without a command while standard input or output is
not a terminal, or a bare command line with standard input piped in: ``git diff | ctxmodes``)
is Pi's print mode: ``ctxmodes run --print``, which prints the last reply's
text and nothing else. ``ctxmodes PROMPT`` on a terminal opens the interactive session and
sends it. Either way, arguments starting with ``@`` are files whose text goes into the
first prompt, after what was piped into standard input, as Pi builds its first message; an
image file is attached to it (:mod:`ctxmodes.cli.pi_prompts` reads them). ``ctxmodes
--list-models [SEARCH]`` is ``ctxmodes models --pi-list [--search SEARCH]``, and ``ctxmodes
--export FILE [OUTPUT]`` is ``ctxmodes session export``.

``--mode`` on this bare line is Pi's output mode, not a context mode: ``--mode json`` (or
``--mode=json``) is Pi's JSON event stream, ``ctxmodes run --json``; ``--mode text`` is Pi's
default output and changes nothing; ``--mode rpc`` is Pi's RPC mode, ``ctxmodes run --rpc``
(see :mod:`ctxmodes.rpc`). Any other value is still the
context mode, so a plugin's context mode named ``json`` or ``text`` is chosen with
``ctxmodes run --mode NAME`` (or ``chat --mode NAME``).

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

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
