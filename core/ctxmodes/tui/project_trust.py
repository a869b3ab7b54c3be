"""``/trust``: save the project trust decision for future sessions, as Pi's ``/trust`` does.

A list of Pi's three choices for the session's working directory (trust it, trust its
parent folder, do not trust it) under the decision saved now and whether this session
trusts the project. The one picked is written to ``trust.json`` in the agent directory by
the store the start-up question uses, with Pi's updates: trusting the parent also removes
the folder's own decision. As in Pi, the running session is not reloaded: the decision
holds from the next start.

Only the user's keys reach this list (a slash command typed in the editor); a store that
cannot be read is named in one line and left as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ctxmodes.errors import CtxmodesError
from ctxmodes.resources.trust import ProjectTrustStore, SavedTrust, TrustChoice, trust_choices
from ctxmodes.tui.key_hints import selector_hint
from ctxmodes.tui.picker import Picker, PickerItem

if TYPE_CHECKING:
    from ctxmodes.tui.app import TerminalSession

TITLE: Final = "Project trust"


def saved_line(saved: SavedTrust | None, folder: str | None) -> str:
    """What the list says of the decision saved now, in Pi's terms: ``none``, or
    ``trusted``/``untrusted`` with the folder it was saved for (``inherited from`` a
    parent's)."""
    if saved is None:
        return "Saved decision: none"
    label = "trusted" if saved.trusted else "untrusted"
    source = f"inherited from {saved.path}" if saved.path != folder else saved.path
    return f"Saved decision: {label} ({source})"


def saved_notice(trusted: bool) -> str:
    return (
        f"Saved trust decision: {'trusted' if trusted else 'untrusted'}. "
        "Restart ctxmodes for it to take effect."
    )


def _is_saved(choice: TrustChoice, saved: SavedTrust | None) -> bool:
    return saved is not None and choice.saved_path == saved.path and choice.trusted == saved.trusted


def trust(session: TerminalSession, args: str) -> None:
    """``/trust``: the list of choices for the session's working directory, opened on the
    one saved now; the one picked is saved, Esc saves nothing."""
    agent = session.agent
    cwd = str(agent.session.cwd)
    store = ProjectTrustStore(agent.host.agent_dir)
    try:
        saved = store.get_entry(cwd)
    except CtxmodesError as error:
        # Nothing to build the list on: the file stays as it is, the project as it was.
        session.notify(f"{error}; nothing was saved", "error")
        return
    choices = trust_choices(cwd, include_session_only=False)
    folder = choices[0].saved_path
    current = "trusted" if agent.session.resources.trusted else "untrusted"
    title = f"{TITLE}\n{cwd}\n\n{saved_line(saved, folder)}\nCurrent session: {current}"
    # ✓ marks the choice that is saved now, as in Pi's list.
    marks = ["✓ " if _is_saved(choice, saved) else "  " for choice in choices]
    rows = [
        PickerItem(choice, choice.label, [("", mark), ("", choice.label)])
        for choice, mark in zip(choices, marks, strict=True)
    ]

    def chosen(item: PickerItem) -> None:
        choice: TrustChoice = item.key
        try:
            store.set_many(choice.updates)
        except CtxmodesError as error:
            session.notify(f"{error}; nothing was saved", "error")
            return
        session.notify(saved_notice(choice.trusted))

    hint = selector_hint(session.keymap, "save")
    picker = Picker(title, lambda query: rows, chosen, hint=hint, filterable=False, counted=False)
    # The list opens on the choice that is saved now, as Pi's does.
    picker.selected = marks.index("✓ ") if "✓ " in marks else 0
    session.open_picker(picker)
