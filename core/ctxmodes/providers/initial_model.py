"""The model a session starts on when nothing names one, picked as Pi picks it.

With no ``--model``, no configured model and no scope, Pi does not refuse to start: it
takes a model whose provider has credentials — the default model of the first provider,
in its own order of preference, that has one (Anthropic's for an ``ANTHROPIC_API_KEY``),
else the first model with credentials in catalog order. So a user who has only set a
provider's key, or logged in, can run ctxmodes at once.
"""

from __future__ import annotations

from collections.abc import Iterable

from ctxmodes.providers.auth import models_with_credentials
from ctxmodes.providers.catalog import ModelSpec, default_models


def initial_model(models: Iterable[ModelSpec]) -> ModelSpec | None:
    """The model of ``models`` (a registry's, in catalog order) a session starts on, as
    Pi's ``findInitialModel`` picks it from the models with credentials; ``None`` when no
    model has any.

    :raises CredentialError: a credential file is corrupt.
    """
    available = models_with_credentials(models)
    by_ref = {model.ref: model for model in available}
    for provider, model_id in default_models().items():
        found = by_ref.get(f"{provider}/{model_id}")
        if found is not None:
            return found
    return available[0] if available else None
