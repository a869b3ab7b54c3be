"""Completion of slash commands (with their argument hints) and of their arguments."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from ctxmodes.tui.commands import SlashCommand


class SlashCompleter(Completer):
    """``/na`` completes to ``/name `` (with a space, as in Pi), showing each command's hint,
    description and whether it runs while the agent works; after ``/name `` it completes
    ``arguments(name)``."""

    def __init__(
        self,
        commands: Callable[[], Mapping[str, SlashCommand]],
        arguments: Callable[[str], list[str]],
    ) -> None:
        self._commands = commands
        self._arguments = arguments

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        name, space, argument = text[1:].partition(" ")
        if not space:
            for command in sorted(self._commands().values(), key=lambda c: c.name):
                if command.name.startswith(name):
                    meta = command.description
                    if not command.while_streaming:
                        meta += " · when idle"
                    # As Pi: the name is followed by a space, so what is typed next is
                    # the command's argument, not more of its name.
                    yield Completion(
                        f"/{command.name} ",
                        start_position=-len(text),
                        display=f"/{command.name} {command.arguments}".rstrip(),
                        display_meta=meta,
                    )
            return
        for value in self._arguments(name):
            if value.startswith(argument) and value != argument:
                yield Completion(value, start_position=-len(argument))
