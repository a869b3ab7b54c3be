from __future__ import annotations

import math
from typing import Any

import pytest

from ctxmodes.session.jsvalues import js_to_number


@pytest.mark.parametrize(
    ("value", "number"),
    [
        (None, 0.0),
        (True, 1.0),
        (3, 3.0),
        (10**400, math.inf),
        (-(10**400), -math.inf),
        ("", 0.0),
        (" \u00a0 2.5\n", 2.5),
        ("0x1F", 31.0),
        ("0B11", 3.0),
        ("0o17", 15.0),
        ("-Infinity", -math.inf),
        ("1e999", math.inf),
        (".5", 0.5),
        ("5.", 5.0),
        ([], 0.0),
        ([None], 0.0),
        ([[" 7 "]], 7.0),
    ],
)
def test_numbers_as_javascript_converts_them(value: Any, number: float) -> None:
    assert js_to_number(value) == number


@pytest.mark.parametrize(
    "value",
    ["inf", "nan", "1_0", "0x", "-0x1", "0x1_0", "1e", "abc", [1, 2], [True], {}, [{}]],
)
def test_values_javascript_cannot_read_as_numbers(value: Any) -> None:
    assert math.isnan(js_to_number(value))
