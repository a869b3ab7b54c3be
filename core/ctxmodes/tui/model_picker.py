"""``/model`` without an argument (and Pi's ``app.model.select`` key): Pi's model selector.

When the session has a model scope (the models Ctrl+P cycles: ``--models``, Pi's
``enabledModels``, or what ``/scoped-models`` set this run) the picker opens on the scoped
models, in the scope's order, under a ``Scope: all | scoped`` line naming the list shown and
a line saying that Tab switches lists. Without a scope it shows every model with
credentials, under Pi's line saying so. The list of all models puts the current one first,
then orders by provider as Pi does (``localeCompare``), the catalog's order within one.

Typing searches as Pi's selector does (pi-tui's fuzzy search over the provider and id), the
best match selected; a switch of lists keeps the search, and selects the current model when
nothing is typed and the list has it, else the first row. Enter with no row matching keeps
the picker open. Each row keeps ctxmodes' mark of where its credentials come from.

The configured default model (``model``, Pi's ``defaultProvider``/``defaultModel``; what a
start without ``--model`` takes) is marked ``· default`` and comes second in the list of all
models, after the current one, as in Pi; typing the beginning of ``default`` finds it first.
Ctrl+S, as in Pi, switches to the selected model and makes it the default: saved in Pi's
``settings.json`` (``defaultProvider``, ``defaultModel``) and, where the running scope lacks
it, added to the scope and to the configured ``enabledModels`` if none of them is its
``provider/id``.

``/model TEXT`` switches at once only to the model TEXT names exactly (Pi's
``findExactModelMatch``: ``provider/id`` or an id only one model has, ignoring case, among the
scope's models when there is a scope, else among those with credentials), or to what
ctxmodes' own spellings name: that model with a ``:<level>`` suffix, or a scheme's spec
(``scripted:FILE``). Any other TEXT opens the picker with TEXT typed in its search, the
cursor before it as Pi leaves it, and the best match selected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, Literal

from ctxmodes.errors import CtxmodesError
from ctxmodes.fuzzy_filter import fuzzy_filter
from ctxmodes.model_scope import ScopedModel, exact_model_match
from ctxmodes.pi_settings_save import Change, save_choice
from ctxmodes.thinking_levels import split_level_suffix
from ctxmodes.tui.key_hints import set_as_default_hint
from ctxmodes.tui.picker import Pairs, Picker, PickerItem
from ctxmodes.tui.picker_keys import MODEL_KEYS

if TYPE_CHECKING:
    from ctxmodes.providers.catalog import ModelSpec
    from ctxmodes.tui.app import TerminalSession

Scope = Literal["all", "scoped"]

#: Pi's action id of the key that switches between the lists (Tab unless rebound).
SCOPE_KEY_ACTION: Final = "tui.input.tab"
#: Pi's line over the list when the session has no scope.
NO_SCOPE_LINE: Final = "Only showing models from configured providers. Use /login to add providers."
#: Pi's line when no row matches.
NO_MATCH: Final = "  No matching models"
#: Pi shows this many rows at once.
VISIBLE_ROWS: Final = 10
#: The punctuation ICU's root collation (JavaScript's ``localeCompare``) orders before
#: digits and letters, in its order.
_COLLATED_PUNCTUATION: Final = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"


def provider_order(provider: str) -> tuple[tuple[tuple[int, str], ...], tuple[bool, ...]]:
    """A key ordering provider names as JavaScript's ``localeCompare`` does: punctuation,
    then digits, then letters regardless of case, and only then lower case before upper."""

    def weight(character: str) -> tuple[int, str]:
        if character in _COLLATED_PUNCTUATION:
            return (0, chr(_COLLATED_PUNCTUATION.index(character)))
        if character.isdigit():
            return (1, character)
        if character.isalpha():
            return (2, character.lower())
        return (3, character)

    return tuple(weight(c) for c in provider), tuple(c.isupper() for c in provider)


def search_text(model: ModelSpec) -> str:
    """What the search matches a model against (Pi's ``getModelSelectorSearchText``; Pi
    names a model without a name by its id)."""
    name = model.name or model.id
    return f"{model.provider} {model.ref} {model.provider} {model.id} {name}"


def named_model(session: TerminalSession, text: str) -> str | None:
    """The spec ``/model TEXT`` switches to without opening the picker, if TEXT names one
    (see the module's description); ``None``: the picker opens with TEXT searched."""
    from ctxmodes.providers.auth import models_with_credentials

    searched = [scoped.model for scoped in session.cycler.scope]
    if not searched:
        try:
            searched = models_with_credentials(session.agent.models())
        except CtxmodesError:
            searched = []  # a corrupt credential file: the picker says so
    exact = exact_model_match(text, searched)
    if exact is not None:
        return exact.ref
    scheme, colon, _ = text.partition(":")
    if colon and scheme in session.agent.model_schemes():
        return text

    def named(spec: str) -> bool:
        return exact_model_match(spec, searched) is not None

    # Only a level after what names a model exactly is split off, so a model whose id
    # ends in one (matched whole above) is never mistaken for another with a level.
    spec, level = split_level_suffix(text, named)
    leveled = exact_model_match(spec, searched) if level is not None else None
    return None if leveled is None else f"{leveled.ref}:{level}"


def open_model_picker(
    session: TerminalSession,
    switch: Callable[[str], None],
    switch_as_default: Callable[[ModelSpec], None],
    search: str = "",
) -> None:
    """Open the picker on the session's scope (every model with credentials without one),
    ``search`` typed in its search; the chosen model's ``provider/id`` goes to ``switch``,
    or to ``switch_as_default`` when Ctrl+S chose it."""
    from ctxmodes.providers.auth import credential_sources, models_with_credentials

    scoped = [scoped.model for scoped in session.cycler.scope]
    try:
        available = models_with_credentials(session.agent.models())
        sources = credential_sources([*available, *scoped])
    except CtxmodesError as error:  # a corrupt credential file
        session.notify(str(error), "error")
        return
    opened = ModelPicker(session, available, scoped, sources, switch, switch_as_default, search)
    session.open_picker(opened.picker)


def save_as_default(session: TerminalSession, model: ModelSpec) -> None:
    """Ctrl+S's save, as Pi's ``setModel`` with ``persist``: ``defaultProvider`` and
    ``defaultModel``; where the running scope lacks the model, it joins the scope, and the
    configured patterns (when there are some and none is its ``provider/id``) get it too.
    A save that fails is one error line; the switch stands."""
    changes: list[Change] = [(("defaultProvider",), model.provider), (("defaultModel",), model.id)]
    cycler = session.cycler
    patterns = session.defaults.enabled_models
    if cycler.scope and all(scoped.model.ref != model.ref for scoped in cycler.scope):
        cycler.scope = (*cycler.scope, ScopedModel(model))
        if patterns and all(pattern.lower() != model.ref.lower() for pattern in patterns):
            patterns = (*patterns, model.ref)
            changes.append((("enabledModels",), list(patterns)))
    notify = session.agent.session.ui.notify
    if save_choice(changes, notify, session.defaults.origins):
        session.defaults.model = model.ref
        session.defaults.enabled_models = patterns


def default_ref(configured: str | None, models: Sequence[ModelSpec]) -> str | None:
    """The ``provider/id`` of the configured default among ``models``: the spec itself, or
    the spec without the thinking level it may end in."""
    refs = {model.ref for model in models}
    if configured is None or configured in refs:
        return configured
    spec, level = split_level_suffix(configured, lambda spec: spec in refs)
    return spec if level is not None else None


class ModelPicker:
    """The open picker: both lists, the one shown, and the current model."""

    def __init__(
        self,
        session: TerminalSession,
        available: Sequence[ModelSpec],
        scoped: Sequence[ModelSpec],
        sources: dict[str, str | None],
        switch: Callable[[str], None],
        switch_as_default: Callable[[ModelSpec], None],
        search: str = "",
    ) -> None:
        self.session = session
        current = session.agent.session.model
        keymap = session.keymap
        #: The scope key as the keymap binds it, for the line that names it.
        self.scope_key = keymap.text(SCOPE_KEY_ACTION)
        self.current = None if current is None else f"{current.provider}/{current.id}"
        self.default = default_ref(session.defaults.model, [*available, *scoped])
        # Pi sorts once, as it opens: the current model first, the default second, then by
        # provider (stably).
        ordered = sorted(available, key=lambda model: provider_order(model.provider))
        self.all = sorted(
            ordered, key=lambda model: (model.ref != self.current, model.ref != self.default)
        )
        self.scoped = list(scoped)
        self.sources = sources
        self.scope: Scope = "scoped" if scoped else "all"
        # Pi's words, naming the keys bound.
        actions = {"key.ctrl+s": lambda: self.choose_as_default(switch_as_default)}
        if scoped:
            actions[SCOPE_KEY_ACTION] = self.switch_scope
        self.picker = Picker(
            f"Model (now {self.current or 'none'})",
            self.rows,
            lambda item: switch(str(item.key)),
            header=self.header,
            emptied_keeps_place=True,
            wraps=True,
            pages=False,
            key_order=MODEL_KEYS,
            visible_rows=VISIBLE_ROWS,
            empty=NO_MATCH,
            details=self.details,
            actions=actions,
            stays_open_unmatched=True,
            hint=set_as_default_hint(keymap),
            # Given as Pi gives its search field the text: the cursor stays at the start.
            query=search,
        )
        self.picker.selected = 0 if search else self.current_place()

    def shown(self) -> list[ModelSpec]:
        return self.scoped if self.scope == "scoped" else self.all

    def current_place(self) -> int:
        """Where the current model is in the list shown, else the first row."""
        refs = [model.ref for model in self.shown()]
        return refs.index(self.current) if self.current in refs else 0

    def rows(self, query: str) -> list[PickerItem]:
        models = self.shown()
        if query:
            models = fuzzy_filter(models, query, self.searched_text)
            if _is_default_search(query):  # the default first, as Pi puts it
                models.sort(key=lambda model: model.ref != self.default)
        rows = []
        for model in models:
            style = "class:picker.active" if model.ref == self.current else ""
            mark = self.sources.get(model.ref) or "no credentials"
            fragments = [(style, model.ref), ("class:picker.hint", f"  {mark}")]
            if model.ref == self.default:
                fragments.append(("class:picker.hint", " · default"))
            rows.append(PickerItem(model.ref, self.searched_text(model), fragments))
        return rows

    def searched_text(self, model: ModelSpec) -> str:
        """Pi's search text, and ``default`` after the default's."""
        return search_text(model) + (" default" if model.ref == self.default else "")

    def choose_as_default(self, switch_as_default: Callable[[ModelSpec], None]) -> None:
        """Ctrl+S: close and hand the selected model to ``switch_as_default`` (nothing while
        no row is shown)."""
        chosen = self.picker.selected_key()
        if chosen is not None:
            self.session.close_picker()
            switch_as_default(next(m for m in self.shown() if m.ref == chosen))

    def header(self) -> list[Pairs]:
        """Pi's lines over the search: the scope, the list shown highlighted, and its key;
        without a scope, that only models with credentials are shown."""
        if not self.scoped:
            return [[("class:picker.warning", NO_SCOPE_LINE)]]

        def named(scope: Scope) -> tuple[str, str]:
            return ("class:picker.active" if self.scope == scope else "class:picker.hint", scope)

        key = self.scope_key
        muted = "class:picker.hint"
        return [
            [(muted, "Scope: "), named("all"), (muted, " | "), named("scoped")],
            [("class:picker.key", key), (muted, " scope (all/scoped)")],
        ]

    def details(self) -> list[str]:
        """Pi's lines under the rows: where the selected row stands when not all are shown,
        and the selected model's name."""
        rows = self.picker.rows()
        if not rows:
            return []
        lines = []
        if len(rows) > VISIBLE_ROWS:
            lines.append(f"  ({self.picker.selected + 1}/{len(rows)})")
        chosen = next(m for m in self.shown() if m.ref == rows[self.picker.selected].key)
        lines.append(f"  Model Name: {chosen.name or chosen.id}")
        return lines

    def switch_scope(self) -> None:
        """Tab: the other list, the search kept; the current model selected when nothing is
        typed and the list has it, else the first row."""
        self.scope = "all" if self.scope == "scoped" else "scoped"
        self.picker.selected = 0 if self.picker.query else self.current_place()
        self.picker.refresh()


def _is_default_search(query: str) -> bool:
    """Whether ``query`` is the beginning of ``default`` (Pi's ``isDefaultSearch``)."""
    typed = query.strip().lower()
    return bool(typed) and "default".startswith(typed)
