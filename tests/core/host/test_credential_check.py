"""A prompt the model could not answer for lack of credentials is refused before it is taken,
as Pi checks the key before the prompt: no plugin sees it, nothing is written."""

from __future__ import annotations

import pytest
from support.host_rig import text_response

from ctxmodes import hookimpl
from ctxmodes.providers.base import ProviderError
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.http_model import HttpModelProvider


def test_a_prompt_without_credentials_is_refused_before_anything_sees_it(make_rig) -> None:
    seen: list[str] = []

    class Watch:
        @hookimpl
        def ctx_input(self, session, event):
            seen.append(event.text)

    rig = make_rig([text_response("never")], plugins=[Watch()])

    def missing() -> None:
        raise ProviderError("No API key for provider: scripted: set SCRIPTED_KEY")

    rig.provider.check_credentials = missing  # type: ignore[method-assign]
    with pytest.raises(ProviderError, match="SCRIPTED_KEY"):
        rig.session.prompt("hello")
    with pytest.raises(ProviderError):
        rig.session.submit("hello again")
    assert seen == []
    assert rig.provider.calls == 0
    path = rig.session.session_manager.session_file
    assert path is not None
    assert not path.exists()
    # Commands still run: they need no model.
    rig.session.submit("/mode")
    assert "Mode:" in rig.ui.notifications[-1][1]


def test_an_http_model_without_a_key_says_how_to_provide_one() -> None:
    spec = ModelSpec(id="m", api="openai-responses", provider="openai", base_url="http://x")
    provider = HttpModelProvider(spec, lambda: None, missing_key_hint="set OPENAI_API_KEY")
    with pytest.raises(ProviderError, match="No API key for provider: openai: set OPENAI_API_KEY"):
        provider.check_credentials()
    HttpModelProvider(spec, lambda: "sk-test").check_credentials()
