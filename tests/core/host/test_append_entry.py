"""A mode writes its own state through the session: ``append_entry`` appends a ``custom``
entry at the leaf, which the model never sees, and only while the session is current."""

from __future__ import annotations

import pytest
from support.host_rig import text_response

from ctxmodes import StaleContextError


def test_a_mode_state_is_a_custom_entry_at_the_leaf_the_model_never_sees(make_rig):
    rig = make_rig([text_response("first"), text_response("second")])
    rig.session.prompt("hello")
    leaf = rig.session.session_manager.get_leaf_id()

    entry_id = rig.session.append_entry("my-mode", {"window": 2})

    stored = rig.file_entries()[-1]
    assert stored["id"] == entry_id
    assert (stored["type"], stored["parentId"]) == ("custom", leaf)
    assert (stored["customType"], stored["data"]) == ("my-mode", {"window": 2})
    assert rig.session.session_manager.get_leaf_id() == entry_id
    rig.session.prompt("again")
    sent = rig.requests()[-1].model_dump_json()
    assert "my-mode" not in sent
    assert "hello" in sent


def test_a_replaced_session_refuses_to_append(make_rig):
    rig = make_rig([])
    replaced = rig.session
    replaced.submit("/new")
    with pytest.raises(StaleContextError):
        replaced.append_entry("my-mode", {"late": True})
    assert all(entry["type"] != "custom" for entry in rig.file_entries())
