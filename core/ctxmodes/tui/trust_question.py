"""Asking, in the session, whether to trust the project of a session taken up during the run
(``/resume``, ``/import``), as Pi asks when it rebuilds its runtime for a project not yet
decided: the start-up's question and answers (:func:`~ctxmodes.resources.trust.trust_choices`)
in a picker. Esc or Ctrl+C is *do not trust* for this run, nothing saved, as at start-up.

The question is asked from the agent's thread, which waits for the answer, before the
session is replaced; on the terminal's own thread nobody can be asked, and the project is
not trusted.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from threading import Event
from typing import TYPE_CHECKING

from ctxmodes.tui.key_hints import selector_hint
from ctxmodes.tui.picker import Picker, PickerItem

if TYPE_CHECKING:
    from ctxmodes.resources.trust import AskTrust, TrustChoice
    from ctxmodes.tui.app import TerminalSession

#: How often a waiting thread looks whether the terminal has closed meanwhile.
_POLL_S = 0.2


def ask_in_session(session: TerminalSession) -> AskTrust:
    """How the run's trust decisions ask while ``session`` runs."""

    def ask(question: str, choices: Sequence[TrustChoice]) -> TrustChoice | None:
        if not session.may_wait_for_answer():
            return None
        answer: Future[TrustChoice | None] = Future()
        rows = [
            PickerItem(number, choice.label, [("", choice.label)])
            for number, choice in enumerate(choices)
        ]

        def settle(choice: TrustChoice | None) -> None:
            if not answer.done():  # the first of a pick and a cancel is the answer
                answer.set_result(choice)

        picker = Picker(
            question,
            lambda query: rows,
            lambda item: settle(choices[item.key]),
            on_cancel=lambda: settle(None),
            hint=selector_hint(session.keymap, "select"),
            filterable=False,
            counted=False,
        )
        shown = Event()

        def open_question() -> None:
            session.open_picker(picker)
            shown.set()

        session.call_soon(open_question)
        while True:
            try:
                return answer.result(timeout=_POLL_S)
            except TimeoutError:
                # Nobody answers any more: the terminal closed, or the question was put away.
                if not session.may_wait_for_answer():
                    return None
                if shown.is_set() and session.picker is not picker and not answer.done():
                    return None

    return ask
