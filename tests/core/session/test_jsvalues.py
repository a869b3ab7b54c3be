from __future__ import annotations

import math
import random
from typing import Any

import pytest
from support.pi_oracle import node_eval

from ctxmodes.session.jsvalues import js_round, js_to_fixed, js_to_number


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


def test_rounding_and_fixed_digits_as_node_computes_them() -> None:
    rng = random.Random(11)
    # Ties (exact in binary: 1.25, 2.5 …) go up in JavaScript and to even in Python.
    ties = [whole + part / 8 for whole in range(40) for part in range(8)]
    values = [*ties, *(rng.uniform(0, 10_000) for _ in range(400)), 1.005, 0.125, 1e-7]
    expected = node_eval(
        "(xs) => xs.map((x) => [Math.round(x), x.toFixed(0), x.toFixed(1), x.toFixed(2)])",
        values,
    )
    ours = [[js_round(x), js_to_fixed(x, 0), js_to_fixed(x, 1), js_to_fixed(x, 2)] for x in values]
    assert ours == expected
