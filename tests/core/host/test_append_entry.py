"""A mode writes its own state through the session: ``append_entry`` appends a ``custom``
entry at the leaf, which the model never sees, and only while the session is current."""

from __future__ import annotations

import io

import pytest
from support.host_rig import text_response

from ctxmodes import StaleContextError
from ctxmodes.host import records
from ctxmodes.host.json_stream import JsonEventStream


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


def test_each_entry_a_mode_appends_is_told_as_stored_as_pi_tells_appendEntry(make_rig):
    rig = make_rig([text_response("first")])
    rig.session.prompt("hello")
    first = rig.session.append_entry("my-mode", {"window": 2})
    second = rig.session.append_entry("my-mode")
    told = rig.of(records.EntryAppended)
    assert [record.entry for record in told] == rig.file_entries()[-2:]
    assert [record.entry["id"] for record in told] == [first, second]
    # Through Pi's JSON stream: the entry as the file holds it, keys in its order.
    out = io.BytesIO()
    stream = JsonEventStream(out, lambda: None, lambda: 0)
    stream(told[0])
    line = rig.session.session_manager.session_file.read_bytes().splitlines()[-2]
    assert out.getvalue() == b'{"type":"entry_appended","entry":' + line + b"}\n"


def test_a_replaced_session_refuses_to_append(make_rig):
    rig = make_rig([])
    replaced = rig.session
    replaced.submit("/new")
    with pytest.raises(StaleContextError):
        replaced.append_entry("my-mode", {"late": True})
    assert all(entry["type"] != "custom" for entry in rig.file_entries())
