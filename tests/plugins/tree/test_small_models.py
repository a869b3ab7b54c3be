"""Tree on small local models: an 8k and a 32k Chat Completions model on a loopback
server that counts tokens and refuses what does not fit, configured without a key."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli_rig import isolate_settings
from support.small_model import check_small_model_session


@pytest.mark.parametrize(
    ("window", "prompts"), [(8_192, 6), pytest.param(32_768, 30, marks=pytest.mark.slow)]
)
@pytest.mark.slow  # a long session in small windows
def test_tree_works_in_a_small_window(
    window: int,
    prompts: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    isolate_settings(tmp_path, monkeypatch)
    check_small_model_session(tmp_path, capsys, mode="tree", context_window=window, prompts=prompts)
