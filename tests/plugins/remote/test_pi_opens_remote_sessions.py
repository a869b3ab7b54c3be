"""A Remote session file — routed namespaced calls, ciphertext results, window markers —
opens in the real Pi 0.85 with the context we build."""

from __future__ import annotations

import pytest
from support.local_rig import call, text
from support.pi_oracle import require_pi


@pytest.mark.pi
def test_pi_opens_a_remote_session(remote, emulator, account):
    pi = require_pi()
    h = remote(
        [
            call("write_file", "notes", path="plan.md", text=emulator.encrypt(account, "step 1")),
            call("new_context"),
            call("read_file", "notes", path="plan.md"),
            text("resumed"),
        ]
    )
    h.prompt("plan, roll over, resume")
    manager = h.manager
    manager.flush()
    (answer,) = pi.open_many([{"file": str(manager.session_file), "at": []}])
    assert "openError" not in answer
    assert answer["entryCount"] == manager.entry_count()
    assert answer["leafId"] == manager.get_leaf_id()
    assert answer["context"] == manager.build_session_context().to_json()
