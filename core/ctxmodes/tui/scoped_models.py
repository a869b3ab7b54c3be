"""``/scoped-models``: Pi's list of the models with credentials, where Enter and Pi's
``app.models.*`` keys choose which of them Ctrl+P and Shift+Ctrl+P cycle through, and in
which order (see :mod:`~ctxmodes.tui.scope_selection`).

Each change applies at once to the running session's scope, as in Pi, and lasts for the run:
the sessions ``/new`` and ``/resume`` open later keep it. Pi's save key (Ctrl+S) saves the
list as Pi's ``enabledModels`` in Pi's global ``settings.json``, as Pi saves it: every model
enabled removes the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ctxmodes.errors import CtxmodesError
from ctxmodes.pi_settings_save import REMOVE, save_choice
from ctxmodes.tui.picker import Picker, PickerItem
from ctxmodes.tui.picker_keys import SCOPED_MODEL_KEYS
from ctxmodes.tui.scope_selection import ScopeSelection, session_scope, starting_ids

if TYPE_CHECKING:
    from ctxmodes.providers.catalog import ModelSpec
    from ctxmodes.tui.app import TerminalSession

TITLE: Final = "Model Configuration"
#: Pi shows this many rows at once.
VISIBLE_ROWS: Final = 8


def scoped_models(session: TerminalSession, args: str) -> None:
    """``/scoped-models``: the models with credentials, those in the scope first in cycling
    order and marked ``✓``; Enter, Pi's keys (all, clear, provider, reorder) and typing to
    search as in Pi, each change applied to the running session's scope at once."""
    from ctxmodes.providers.auth import models_with_credentials

    try:
        available = models_with_credentials(session.agent.models())
    except CtxmodesError as error:  # a corrupt credential file
        session.notify(str(error), "error")
        return
    enabled = starting_ids(session.cycler.scope, session.model_patterns, available)
    ScopedModelsList(session, available, ScopeSelection({m.ref: m for m in available}, enabled))


class ScopedModelsList:
    """The open list: the selection it edits, the picker drawing it, and the session whose
    scope each change sets."""

    def __init__(
        self, session: TerminalSession, available: list[ModelSpec], selection: ScopeSelection
    ) -> None:
        self.session = session
        self.available = available
        self.selection = selection
        keymap = session.keymap
        self.picker = Picker(
            f"{TITLE}\nSession-only. ctxmodes saves nothing: "
            f"{keymap.text('app.models.save')} says which setting to edit.",
            self.rows,
            self.toggle,
            hint=self.footer(),
            wraps=True,
            keeps_place=True,
            counted=False,
            visible_rows=VISIBLE_ROWS,
            empty="  No matching models",
            details=self.details,
            key_order=SCOPED_MODEL_KEYS,
            actions={
                "app.models.enableAll": lambda: self.change_all(enable=True),
                "app.models.clearAll": lambda: self.change_all(enable=False),
                "app.models.toggleProvider": self.toggle_provider,
                "app.models.reorderUp": lambda: self.reorder(-1),
                "app.models.reorderDown": lambda: self.reorder(1),
                "app.models.save": self.save,
            },
        )
        session.open_picker(self.picker)

    def rows(self, query: str) -> list[PickerItem]:
        selection = self.selection
        rows = []
        for model_id in selection.search(query):
            model = selection.models.get(model_id)
            mark = "✓ " if model is not None and selection.is_enabled(model_id) else "  "
            badge = f" [{model.provider}]" if model is not None else " [unavailable]"
            name = model_id if model is None else model.id
            rows.append(
                PickerItem(
                    model_id,
                    model_id,
                    [
                        ("class:picker.active", mark),
                        ("" if model is not None else "strike", name),
                        ("class:picker.hint", badge),
                    ],
                )
            )
        return rows

    def details(self) -> list[str]:
        """Pi's lines under the rows: where the selected row stands when not all are
        shown, and the selected model's name."""
        rows = self.picker.rows()
        if not rows:
            return []
        lines = []
        if len(rows) > VISIBLE_ROWS:
            lines.append(f"  ({self.picker.selected + 1}/{len(rows)})")
        model = self.selection.models.get(rows[self.picker.selected].key)
        name = model.name or model.id if model is not None else None
        lines.append(f"  Model Name: {name}" if name is not None else "  Model unavailable")
        return lines

    def footer(self) -> str:
        keymap = self.session.keymap
        parts = [
            f"{keymap.text('tui.select.confirm')} toggle",
            f"{keymap.text('app.models.enableAll')} all",
            f"{keymap.text('app.models.clearAll')} clear",
            f"{keymap.text('app.models.toggleProvider')} provider",
            f"{keymap.text('app.models.reorderUp')}/{keymap.text('app.models.reorderDown')}"
            " reorder",
            f"{keymap.text('app.models.save')} save",
            self.selection.count_text(),
        ]
        unsaved = " (unsaved)" if self.selection.changed else ""
        return "  " + " · ".join(parts) + unsaved

    def selected_id(self) -> str | None:
        chosen = self.picker.selected_key()
        return None if chosen is None else str(chosen)

    def toggle(self, item: PickerItem) -> None:
        """Enter: the selected model in or out of the scope; the list stays open on the
        same place, as Pi's does (the rows reorder under it)."""
        self.selection.toggle(str(item.key))
        self.changed()
        self.session.open_picker(self.picker)

    def change_all(self, *, enable: bool) -> None:
        """Every model in (or out of) the scope; only the rows shown while searching."""
        targets = [row.key for row in self.picker.rows()] if self.picker.query else None
        if enable:
            self.selection.enable_all(targets)
        else:
            self.selection.clear_all(targets)
        self.changed()

    def toggle_provider(self) -> None:
        model_id = self.selected_id()
        if model_id is not None and self.selection.toggle_provider(model_id):
            self.changed()

    def reorder(self, delta: int) -> None:
        model_id = self.selected_id()
        if model_id is not None and self.selection.move(model_id, delta):
            self.picker.selected += delta
            self.changed()

    def changed(self) -> None:
        """Set the running session's scope from the list, redraw it."""
        self.session.cycler.scope = session_scope(self.selection.enabled, self.available)
        self.session.scope_chosen = True
        self.picker.hint = self.footer()
        self.picker.refresh()
        self.session.app.invalidate()

    def save(self) -> None:
        """Pi's save key: the list saved as Pi's ``enabledModels``, or the key removed when
        every model is enabled."""
        enabled = self.selection.enabled
        every = {model.ref for model in self.available}
        if enabled is None or (len(enabled) == len(every) and every.issuperset(enabled)):
            patterns: tuple[str, ...] = ()
        else:
            patterns = tuple(enabled)

        said: list[tuple[str, str]] = []
        saved = list(patterns) if patterns else REMOVE
        changes = [(("enabledModels",), saved)]
        if save_choice(changes, lambda *line: said.append(line), self.session.defaults.origins):
            self.session.defaults.enabled_models = patterns
            self.selection.changed = False
            self.picker.hint = self.footer()
        # Pi's words, unless the save failed or another source decides the next start.
        line, level = said[-1] if said else ("Model selection saved to settings", "info")
        self.picker.say(line, error=level == "error")
