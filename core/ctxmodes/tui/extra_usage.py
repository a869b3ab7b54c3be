"""The warning that the session's Anthropic calls are paid as extra usage, not by a Claude
plan (``terminal.anthropic_extra_usage_warning``, Pi's ``warnings.anthropicExtraUsage``).

Anthropic bills a third-party harness signed in with a Claude Pro/Max subscription per
token, to the account's extra usage, where a user may expect the plan to cover it. So, as
Pi does, the terminal says so once per run, the first time the session's model is an
``anthropic`` one reached with a subscription: a login stored as OAuth, or a key that is a
subscription's token (``sk-ant-oat…``, as ``ANTHROPIC_OAUTH_TOKEN`` gives one). It looks
at start-up, after each command that answers with a notice (``/model``, the model cycling
keys, ``/login``) and after a switch of session.

Internal to ctxmodes: not part of the API; it may change in any release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ctxmodes.errors import CtxmodesError
from ctxmodes.providers.auth import AuthResolver

if TYPE_CHECKING:
    from ctxmodes.sdk import Agent

WARNING: Final = (
    "Anthropic is reached with a Claude subscription: its calls from a third-party "
    "harness such as ctxmodes are billed per token as extra usage, outside the plan's "
    "limits (see https://claude.ai/settings/usage). /settings turns this warning off."
)
#: How a Claude subscription's token begins, where a key would.
SUBSCRIPTION_TOKEN_PREFIX: Final = "sk-ant-oat"


class ExtraUsageWarning:
    """Whether the warning is due: once per run, while ``enabled``."""

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self._shown = False

    def due(self, agent: Agent) -> bool:
        """Whether to show the warning now, for ``agent``'s model; once it is due it is not
        again."""
        model = agent.session.model
        if self._shown or not self.enabled or model is None or model.provider != "anthropic":
            return False
        ref = f"{model.provider}/{model.id}"
        spec = next((each for each in agent.models() if each.ref == ref), None)
        self._shown = paid_by_subscription(model.provider, None if spec is None else spec.api_key)
        return self._shown


def paid_by_subscription(
    provider: str, configured_key: str | None = None, resolver: AuthResolver | None = None
) -> bool:
    """Whether ``provider``'s requests go with a Claude subscription's credentials (given
    the key the model's configuration names, if any). Refreshes no login; credentials that
    cannot be read are no subscription (the request says why)."""
    resolver = resolver or AuthResolver()
    try:
        if resolver.bills_subscription(provider):
            return True
        resolved = resolver.resolve(provider, configured_key)
    except CtxmodesError:
        return False
    key = None if resolved is None else resolved.api_key
    return key is not None and key.startswith(SUBSCRIPTION_TOKEN_PREFIX)
