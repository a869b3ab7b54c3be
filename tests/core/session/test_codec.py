from __future__ import annotations

import base64
import json
import math
import random
import struct
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxmodes.session import codec


def _run_node(node: str, script: str, payload: Any) -> Any:
    result = subprocess.run(
        [node, "-e", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(result.stdout)


def test_every_oracle_line_reencodes_to_the_same_bytes(oracle_cases: Path) -> None:
    checked = 0
    for path in sorted(oracle_cases.glob("*.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            line = line.rstrip(b"\r")
            try:
                value = codec.loads(line)
            except codec.JsonDecodeError:
                continue
            assert codec.dumps(value) == line, (path.name, line[:120])
            checked += 1
    assert checked > 6000


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (0.1 + 0.2, "0.30000000000000004"),
        (3e-5, "0.00003"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (1e21, "1e+21"),
        (1.2345678901234568e20, "123456789012345680000"),
        (2.0**60, "1152921504606847000"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (float("nan"), "null"),
        (float("-inf"), "null"),
    ],
)
def test_numbers_are_written_as_javascript_does(value: float, text: str) -> None:
    assert codec.dumps(value).decode() == text


def test_integers_beyond_double_precision_are_rounded_like_javascript() -> None:
    assert codec.dumps(2**53 + 1) == b"9007199254740992"
    assert codec.dumps(12345678901234567890) == b"12345678901234567000"
    assert codec.dumps(10**400) == b"null"
    assert codec.dumps(-(2**53)) == b"-9007199254740992"


def test_keys_that_are_array_indices_come_first_in_numeric_order() -> None:
    value = {"b": 1, "10": 2, "2": 3, "01": 4, "-1": 5, "4294967295": 6, "a": 7}
    assert codec.dumps(value) == (b'{"2":3,"10":2,"b":1,"01":4,"-1":5,"4294967295":6,"a":7}')


def test_strings_escape_like_json_stringify() -> None:
    value = 'q"\\\b\f\n\r\t\x01\x1f\x7f\u2028/é😀\ud800x\udfff'
    assert codec.dumps(value).decode("utf-8") == (
        '"q\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\u2028/é😀\\ud800x\\udfff"'
    )
    # Two surrogate halves next to each other are one character in JavaScript.
    assert codec.dumps("\ud83d\ude00") == '"😀"'.encode()


def test_fragments_a_caller_encoded_are_written_as_they_are() -> None:
    part = orjson.Fragment(codec.dumps({"sha1": 1.5e21, "n": 1.0}))
    # The value around the fragment needs the general path (an exponent, a key ending in a
    # digit); the fragment keeps its own text.
    assert codec.dumps({"k2": 2.0, "part": part}) == b'{"k2":2,"part":{"sha1":1.5e+21,"n":1}}'
    assert codec.dumps([part]) == b'[{"sha1":1.5e+21,"n":1}]'


def test_dumps_line_appends_a_newline_and_rejects_non_json() -> None:
    assert codec.dumps_line({"a": [1, None, True]}) == b'{"a":[1,null,true]}\n'
    with pytest.raises(TypeError):
        codec.dumps({1: "x"})
    with pytest.raises(TypeError):
        codec.dumps(object())


@pytest.mark.parametrize(
    ("data", "accepted"),
    [
        (b'"\\ud800"', True),
        (b"1e400", True),
        (b'{"a":1,"a":2}', True),
        (b'"\xff"', True),
        (b"18446744073709551616", True),
        (b'{"a":1}\r', True),
        (b"NaN", False),
        (b"[Infinity]", False),
        (b"-Infinity", False),
        (b"01", False),
        (b"[1,]", False),
        (b"\xef\xbb\xbf{}", False),
        (b'{"a":\x0c1}', False),
        (b'"\x01"', False),
        (b"", False),
    ],
)
def test_loads_accepts_what_json_parse_accepts(data: bytes, accepted: bool) -> None:
    if accepted:
        codec.loads(data)
    else:
        with pytest.raises(codec.JsonDecodeError):
            codec.loads(data)


def test_loads_keeps_the_last_duplicate_key_in_the_first_position() -> None:
    assert list(codec.loads(b'{"a":1,"b":2,"a":3}').items()) == [("a", 3), ("b", 2)]


_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(["\ud800", "\udc00"]))
)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(max_size=4) | st.sampled_from(["0", "7", "10"]), children, max_size=4
        )
    ),
    max_leaves=12,
)


@given(_JSON_VALUES)
def test_encoding_is_a_fixed_point_of_decode_then_encode(value: Any) -> None:
    encoded = codec.dumps(value)
    assert codec.dumps(codec.loads(encoded)) == encoded


def _random_doubles(count: int) -> list[float]:
    rng = random.Random(20260904)
    values = [
        struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(count)
    ]
    values += [rng.uniform(-1, 1) * 10.0 ** rng.randint(-25, 25) for _ in range(count)]
    values += [10.0**exponent for exponent in range(-30, 30)] + [0.1, 100.0, 123456.789e15]
    return [value for value in values if math.isfinite(value)]


def test_float_formatting_matches_node(node: str) -> None:
    values = _random_doubles(5000)
    script = (
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{"
        "const a=JSON.parse(s).map(Number);"
        "process.stdout.write(JSON.stringify(a.map(x=>JSON.stringify(x))))})"
    )
    expected = _run_node(node, script, [repr(value) for value in values])
    assert [codec.js_number(value) for value in values] == expected


def test_random_values_are_json_stringify_fixed_points_in_node(node: str) -> None:
    rng = random.Random(7)
    pieces = ["a", "é", "\u2028", "\x00", "\x7f", "😀", "\ud800", "\udfff", '"', "\\", "10", "0"]

    def value(depth: int) -> Any:
        kind = rng.randrange(8 if depth < 3 else 5)
        if kind == 0:
            return rng.choice([None, True, False])
        if kind == 1:
            return rng.choice([0, -1, 2**53 + 1, 10**20 + 7, rng.randrange(-(10**9), 10**9)])
        if kind == 2:
            return rng.choice([*_random_doubles(5), -0.0, 1.0, 1e21])
        if kind in (3, 4):
            return "".join(rng.choice(pieces) for _ in range(rng.randrange(6)))
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice([*pieces[:4], "1", "20", "3"]): value(depth + 1) for _ in range(4)}

    encoded = [codec.dumps(value(0)) for _ in range(400)]
    script = (
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{"
        "const a=JSON.parse(s).map(b=>Buffer.from(b,'base64').toString('utf8'));"
        "process.stdout.write(JSON.stringify(a.map(t=>"
        "Buffer.from(JSON.stringify(JSON.parse(t))).toString('base64'))))})"
    )
    payload = [base64.b64encode(item).decode() for item in encoded]
    answers = _run_node(node, script, payload)
    assert [base64.b64decode(answer) for answer in answers] == encoded


def test_acceptance_matches_node(node: str) -> None:
    inputs = [
        b'"\\ud800"',
        b"1e400",
        b'"\xff\xfe"',
        b"NaN",
        b"[Infinity]",
        b"01",
        b"[1,]",
        b"\xef\xbb\xbf{}",
        b'{"a":\x0c1}',
        b'"\x01"',
        b"",
        b"  ",
        b"-0",
        b"1E5",
        b'"\\/"',
        b'{"__proto__":1}',
        b"[1e-400]",
        b"123456789012345678901234567890",
        b"tru",
    ]
    script = (
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{"
        "const out=JSON.parse(s).map(b=>{const t=Buffer.from(b,'base64').toString('utf8');"
        "try{return Buffer.from(JSON.stringify(JSON.parse(t))).toString('base64')}"
        "catch{return null}});process.stdout.write(JSON.stringify(out))})"
    )
    answers = _run_node(node, script, [base64.b64encode(item).decode() for item in inputs])
    for data, answer in zip(inputs, answers, strict=True):
        try:
            ours: bytes | None = codec.dumps(codec.loads(data))
        except codec.JsonDecodeError:
            ours = None
        assert ours == (None if answer is None else base64.b64decode(answer)), data


def test_one_nesting_limit_for_reading_and_writing() -> None:
    from ctxmodes.session.codec import MAX_NESTING, JsonEncodeError, nested_too_deeply

    def nested(depth: int) -> object:
        value: object = 0
        for _ in range(depth):
            value = [value]
        return value

    assert not nested_too_deeply(codec.dumps_line(nested(MAX_NESTING)))
    assert codec.loads(codec.dumps_line(nested(MAX_NESTING))) == nested(MAX_NESTING)
    with pytest.raises(JsonEncodeError, match="nested deeper than 200 levels"):
        codec.dumps_line(nested(MAX_NESTING + 1))
    with pytest.raises(JsonEncodeError):
        codec.dumps(nested(5_000))
    # Brackets inside strings are text, not nesting.
    assert not nested_too_deeply(codec.dumps_line({"text": "[" * 10_000}))


@given(_JSON_VALUES)
def test_the_direct_encoding_is_used_only_when_it_is_json_stringifys(value: Any) -> None:
    # orjson's output is taken as is only where converting every value first gives the same.
    direct = codec._encode_directly(value, 0)
    assert direct is None or direct == orjson.dumps(codec._convert(value))


def test_most_session_values_take_the_direct_encoding() -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "é\n\x01"}], "timestamp": 1}
    assert codec._encode_directly(message, 0) == codec.dumps(message)
    usage = {"cost": {"input": 0.00123, "total": 12.5}, "ratio": -3.0000000000000004e-2}
    assert codec._encode_directly(usage, 0) == codec.dumps(usage)
    odd_values = (
        {"a": 1.0},
        {"a": 1e16},
        {"a": 1e-7},
        {"a": [1, -0.0]},
        [1e21],
        {"7": 1},
        [2**53 + 1],
        "\ud800",
        {1: 2},
    )
    for odd in odd_values:
        assert codec._encode_directly(odd, 0) is None


def test_floats_take_the_direct_encoding_only_where_orjson_writes_them_as_javascript() -> None:
    for value in [*_random_doubles(20_000), -0.0, 0.0, 1e21, 5e-324, 2.0**53]:
        direct = codec._encode_directly([value], 0)
        assert direct is None or direct == b"[" + codec.js_number(value).encode() + b"]", value


def _restringified(text: bytes) -> bytes | None:
    """``text`` decoded for encoding again and encoded, ``None`` where that way declines."""
    try:
        value = codec.loads_to_restringify(text)
    except codec.JsonDecodeError:
        return None
    return codec.dumps_restringified([value])


@given(_JSON_VALUES, st.booleans())
def test_restringifying_gives_json_stringifys_bytes_or_declines(value: Any, spaced: bool) -> None:
    # Decoded only to be encoded again, without the search for numbers: the general path's
    # bytes (JSON.stringify's, checked against node above), from canonical or spaced text.
    try:
        text = json.dumps(value).encode() if spaced else codec.dumps(value)
    except (UnicodeEncodeError, ValueError):
        return
    encoded = _restringified(text)
    assert encoded is None or encoded == codec.dumps(codec.loads(text))


def test_restringifying_renders_floats_and_declines_what_orjson_writes_otherwise() -> None:
    for text in (
        b"[1.0, -0.0, 1e16, 1E5, 1.5e-7, 1e-6, 1e21, 1e400, 0.000123, 2.5]",
        b'{"a":1e-7}',
        b"[0.00010000000000000002, 0.0001, 999999999999999.9, 1000000000000000.1, 9.5e-5]",
    ):
        assert _restringified(text) == codec.dumps(codec.loads(text))
    values = _random_doubles(5000)
    assert _restringified(orjson.dumps(values)) == codec.dumps(values)
    declined = (
        b'{"7":1,"a":2}',  # an array index, which JavaScript writes first
        b'{"a1":1}',  # a key ending in a digit, which the check cannot tell from one
        b"[9007199254740993]",  # beyond 2**53: JavaScript rounds it
        b'["\\ud800"]',  # a lone surrogate: only the full decoder reads it
        b'["\xff"]',  # not UTF-8: JSON.parse reads U+FFFD
    )
    for text in declined:
        assert _restringified(text) is None, text
    with pytest.raises(codec.JsonDecodeError):
        codec.loads_to_restringify(b"[NaN]")
