"""Pi's ``--list-models [SEARCH]`` output (``ctxmodes models --pi-list``): the models whose
provider has credentials, those pi-tui's fuzzy filter keeps for the search, sorted by
provider then id as ``localeCompare`` orders them, in Pi's table of six columns (context
window and output limit written as ``200K``, ``1.0M``), or Pi's line saying there are none.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ctxmodes.fuzzy_filter import fuzzy_filter
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.session.jsvalues import js_length, js_locale_sort_key, js_to_fixed

#: Pi's words where it has no model with credentials to list; ctxmodes' ways to add one.
NO_MODELS_AVAILABLE: Final = (
    "No models available. Use /login or `ctxmodes login PROVIDER` to log into a provider via "
    "OAuth or API key; `ctxmodes login` lists every provider and the variables that give it "
    "credentials."
)
_HEADER: Final = ("provider", "model", "context", "max-out", "thinking", "images")


def format_token_count(count: int) -> str:
    """A token count as Pi writes it: ``999``, ``1.5K``, ``200K``, ``1.0M``, ``2M``."""
    for size, suffix in ((1_000_000, "M"), (1_000, "K")):
        if count >= size:
            scaled = count / size
            if scaled.is_integer():
                return f"{int(scaled)}{suffix}"
            # JavaScript's toFixed(1): 1750 is "1.8K" (Python's formatting says "1.7K").
            return f"{js_to_fixed(scaled, 1)}{suffix}"
    return str(count)


def pi_model_list(available: Sequence[ModelSpec], search: str | None) -> list[str]:
    """The lines Pi prints for ``--list-models [search]``, given the models with credentials
    in the order the providers were registered (which decides between equal scores)."""
    if not available:
        return [NO_MODELS_AVAILABLE]
    kept = list(available)
    if search:
        kept = fuzzy_filter(kept, search, lambda model: f"{model.provider} {model.id}")
    if not kept:
        return [f'No models matching "{search}"']
    kept.sort(key=lambda model: (js_locale_sort_key(model.provider), js_locale_sort_key(model.id)))
    rows = [_HEADER] + [
        (
            model.provider,
            model.id,
            format_token_count(model.context_window),
            format_token_count(model.max_tokens),
            "yes" if model.reasoning else "no",
            "yes" if model.images else "no",
        )
        for model in kept
    ]
    widths = [max(js_length(row[column]) for row in rows) for column in range(len(_HEADER))]
    # Every cell is padded, the last one too: Pi's lines end in spaces.
    return [
        "  ".join(_pad(cell, width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]


def _pad(cell: str, width: int) -> str:
    """``cell.padEnd(width)``: widths in UTF-16 code units, as JavaScript counts them."""
    return cell + " " * (width - js_length(cell))
