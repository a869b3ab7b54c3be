"""A grapheme takes the cells Pi's ``visibleWidth`` gives it: the real pi-tui judges letters
of many scripts, marks alone and after letters, wide and half-width forms, and emoji alone,
presented, with skin tones, joined, as keycaps and as flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.pi_oracle import run_pi_script

from ctxmodes.tui.grapheme_cells import grapheme_cells
from ctxmodes.tui.line_field import graphemes

SCRIPT = Path(__file__).parents[2] / "support" / "pi_text_width.mjs"

SAMPLES = [
    "a", "~", "\t", "\x01", "\r\n", "é", "e\u0301", "\u0301", "\u0308\u0301", "東", "京",
    "カ", "ｱ", "\uff21", "ﾞ", "한", "ㄱ", "\u3000", "\u00a0", "\u200b", "\u200d", "\ufeff",
    "😀", "👍", "👍🏽", "r🏽", "🏽", "👨\u200d👩\u200d👧", "👩\u200d💻", "☺", "☺\ufe0f",
    "❤", "❤\ufe0f", "1\ufe0f\u20e3", "#\u20e3", "🇯🇵", "🇯", "🏴\U000e0067\U000e0062\U000e0065"
    "\U000e006e\U000e0067\U000e007f", "⌚", "⭐", "©", "©\ufe0f", "क", "कि", "क्ष", "ก\u0e33",
    "ສ\u0eb3", "\u0627", "ع\u0650", "\u03b1", "ж", "\u0915\u093e", "\u1734", "\U00020000", "\ue000",
]  # fmt: skip


@pytest.mark.pi
def test_each_grapheme_takes_the_cells_pi_gives_it() -> None:
    for sample in SAMPLES:
        assert graphemes(sample) == [sample], f"{sample!r} is one grapheme"
    widths = run_pi_script(SCRIPT, json.dumps(SAMPLES))
    ours = [grapheme_cells(sample) for sample in SAMPLES]
    assert dict(zip(SAMPLES, ours, strict=True)) == dict(zip(SAMPLES, widths, strict=True))
