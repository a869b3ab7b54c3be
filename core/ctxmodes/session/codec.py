"""JSON encoding and decoding with the semantics of JavaScript's ``JSON.parse``/``JSON.stringify``.

Pi writes every session line with ``JSON.stringify(value) + "\\n"`` and reads it back with
``JSON.parse``. This module is the only place that turns session JSON into bytes or back, so
that a line Pi wrote re-encodes to exactly the same bytes:

* object keys keep their order, except that keys which are JavaScript array indices
  (``"0"`` … ``"4294967294"``) come first in ascending numeric order, as in any JS object;
* no whitespace; non-ASCII characters, U+2028/U+2029 and DEL are written as they are;
  control characters use the short escapes or lowercase ``\\u00xx``; lone surrogates are
  written as lowercase ``\\udxxx`` escapes;
* numbers follow ``Number.prototype.toString``: integral values print without a fraction
  (``1.0`` → ``1``, ``-0`` → ``0``), decimal notation for exponents from -7 to 20 and
  ``1e+21`` / ``1.5e-7`` style outside it; integers beyond 2**53 are rounded to the double
  JavaScript would hold; NaN and the infinities become ``null``.

Decoding accepts what ``JSON.parse`` accepts on text decoded the way Pi's reader decodes it
(UTF-8 with invalid bytes replaced by U+FFFD): lone surrogate escapes and numbers that overflow
a double are accepted, ``NaN``/``Infinity`` literals are not. Integers keep full precision on
the Python side; they are rounded only when encoded.

orjson does the work; values it cannot encode the JavaScript way are pre-rendered and handed
to it as :class:`orjson.Fragment`. A caller may hand :func:`dumps` a value holding fragments
of its own (JSON text it encoded with this module, a part at a time): they are written as
they are.

Nesting has one limit everywhere, :data:`MAX_NESTING` levels of arrays and objects in a line:
the reader skips (and reports) a line nested deeper, and encoding refuses a value nested
deeper with :class:`JsonEncodeError`. Pi has no such limit, but no session it writes comes
near it, and below it every value the store holds also encodes inside the reports and traces
that wrap it (orjson stops at 255 levels).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Final

import orjson

__all__ = [
    "MAX_NESTING",
    "JsonDecodeError",
    "JsonEncodeError",
    "dumps",
    "dumps_items",
    "dumps_line",
    "dumps_restringified",
    "js_number",
    "loads",
    "loads_rejected",
    "loads_to_restringify",
    "nested_too_deeply",
]

#: The deepest nesting of arrays and objects a session line may have (see above).
MAX_NESTING: Final = 200

_MAX_SAFE_INTEGER: Final = 2**53
_MAX_ARRAY_INDEX: Final = 2**32 - 2
_STRING_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_NEEDS_ESCAPE: Final = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')


class JsonDecodeError(ValueError):
    """The text is not JSON that ``JSON.parse`` would accept."""


class JsonEncodeError(ValueError):
    """The value is nested deeper than :data:`MAX_NESTING` levels."""


_TOO_DEEP: Final = f"value nested deeper than {MAX_NESTING} levels"
_STRINGS: Final = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS: Final = bytes(range(256)).translate(None, b"[]{}")
_STEP: Final = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def nested_too_deeply(line: bytes) -> bool:
    """True when the JSON text ``line`` nests arrays and objects deeper than
    :data:`MAX_NESTING` levels (for text that is not JSON, an estimate)."""
    # A line with few brackets is shallow whatever they are: the common case costs two counts.
    if line.count(b"[") + line.count(b"{") <= MAX_NESTING:
        return False
    structure = _STRINGS.sub(b"", line).translate(None, _BRACKETS)
    if structure.count(b"[") + structure.count(b"{") <= MAX_NESTING:
        return False
    depth = deepest = 0
    for byte in structure:
        depth += _STEP[byte]
        if depth > deepest:
            deepest = depth
            if deepest > MAX_NESTING:
                return True
    return False


# --------------------------------------------------------------------------- decoding


#: What orjson says about the inputs only it rejects (see :func:`loads`).
_LENIENT_REASONS: Final = ("surrogate", "UTF-8", "infinity")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON text as ``JSON.parse`` would after Pi's UTF-8 decoding.

    :raises JsonDecodeError: if ``JSON.parse`` would throw on it.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return loads_rejected(data, exc.msg)


def loads_rejected(data: bytes | bytearray | memoryview | str, reason: str) -> Any:
    """:func:`loads` for a text orjson already rejected, saying ``reason``.

    orjson is stricter than ``JSON.parse`` about a few inputs (lone surrogate escapes,
    invalid UTF-8 bytes, numbers beyond the double range), which the standard library parser
    covers; any other failure is one ``JSON.parse`` shares, and costs no second parse.

    :raises JsonDecodeError: if ``JSON.parse`` would throw on it.
    """
    if not any(lenient in reason for lenient in _LENIENT_REASONS):
        raise JsonDecodeError(reason)
    text = data if isinstance(data, str) else bytes(data).decode("utf-8", errors="replace")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise JsonDecodeError(str(exc)) from None


# --------------------------------------------------------------------------- encoding


def js_number(value: float) -> str:
    """Render a float exactly as JavaScript's ``Number.prototype.toString`` does."""
    if value != value or value in (float("inf"), float("-inf")):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits, point = _shortest_digits(abs(value))
    count = len(digits)
    # ``point`` is the position of the decimal point relative to the first digit (the "n"
    # of the ECMAScript algorithm); ``count`` is its "k".
    if count <= point <= 21:
        return sign + digits + "0" * (point - count)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exponent = point - 1
    exponent_text = f"e+{exponent}" if exponent >= 0 else f"e-{-exponent}"
    if count == 1:
        return sign + digits + exponent_text
    return sign + digits[0] + "." + digits[1:] + exponent_text


def dumps_indented(value: Any) -> str:
    """``JSON.stringify(value, null, 2)``: as :func:`dumps`, one line per member, indented by
    two spaces per level."""
    return orjson.dumps(_convert(value), option=orjson.OPT_INDENT_2).decode()


def _shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-tripping decimal digits of a positive float and its point position."""
    text = repr(value)
    mantissa, _, exponent_text = text.partition("e")
    exponent = int(exponent_text) if exponent_text else 0
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + exponent
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    return stripped.rstrip("0"), point


def _integer(value: int) -> Any:
    if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
        return value
    try:
        return orjson.Fragment(js_number(float(value)))
    except OverflowError:
        return None


def _float(value: float) -> Any:
    if value.is_integer() and -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
        return int(value)
    return orjson.Fragment(js_number(value))


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return _STRING_ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _quote(value: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, value) + '"'


def _string(value: str) -> Any:
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        # Surrogates: pair up adjacent high/low halves (JavaScript sees one character there),
        # then escape whatever is left alone.
        paired = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        return orjson.Fragment(_quote(paired))
    return value


def _is_array_index(key: str) -> bool:
    if not key.isdigit() or not key.isascii():
        return False
    if len(key) > 1 and key[0] == "0":
        return False
    return int(key) <= _MAX_ARRAY_INDEX


def _object(value: Mapping[Any, Any]) -> dict[str, Any]:
    converted: dict[str, Any] = {}
    index_keys: list[str] = []
    for key, item in value.items():
        if type(key) is not str:
            raise TypeError(f"session JSON object keys must be strings, not {type(key).__name__}")
        if key[:1].isdigit() and _is_array_index(key):
            index_keys.append(key)
        converted[key] = _convert(item)
    if not index_keys:
        return converted
    index_keys.sort(key=int)
    ordered = {key: converted[key] for key in index_keys}
    ordered.update((key, item) for key, item in converted.items() if key not in ordered)
    return ordered


def _convert(value: Any) -> Any:
    """Return ``value`` with everything orjson would render differently from JS pre-rendered."""
    if value is None or value is True or value is False:
        return value
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is int:
        return _integer(value)
    if kind is float:
        return _float(value)
    if kind is dict or isinstance(value, Mapping):
        return _object(value)
    if kind is list or kind is tuple:
        return [_convert(item) for item in value]
    if kind is orjson.Fragment:
        # JSON text the caller encoded already (with this module): written as it is.
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return _integer(int(value))
    if isinstance(value, float):
        return _float(float(value))
    if isinstance(value, str):
        return _string(str(value))
    raise TypeError(f"cannot encode {kind.__name__} as session JSON")


# orjson's own output is JSON.stringify's except for some numbers and keys: a float it writes
# with an exponent (``1e+16``, which JavaScript writes out in full up to 1e21) or with a ``.0``
# fraction (``1.0``, which JavaScript writes ``1``), an integer beyond 2**53 (which orjson
# refuses under OPT_STRICT_INTEGER) and a key that is an array index (which JavaScript puts
# first). Every other float orjson writes (a fraction in plain decimal notation) is exactly
# JavaScript's shortest round-tripping form. These patterns find every such output, and a few
# others (string content that looks like one, a key ending in a digit), which then take the
# general path.
_NUMBER_DIFFERS: Final = rb"-?[0-9]+(?:\.[0-9]+)?[eE]|-?[0-9]+\.0(?![0-9])"
# Patterns that start with a literal are searched several times faster by ``re``, hence one
# per byte that can precede a number; the member pattern starts with the two bytes ``":``
# that end every key.
_MAY_DIFFER_FROM_JS: Final = tuple(
    re.compile(pattern).search
    for pattern in (
        # A member's value (not "12:30:05.123" in a string), or a key ending in a digit.
        rb'":(?:' + _NUMBER_DIFFERS + rb'|(?<=[0-9]":))',
        rb",(?:" + _NUMBER_DIFFERS + rb")",
        rb"\[(?:" + _NUMBER_DIFFERS + rb")",
    )
)
# Everything orjson would render some way of its own goes to the general path instead.
_FAST_OPTIONS: Final = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_STRICT_INTEGER
)


def _refuse(value: Any) -> Any:
    raise TypeError


def _encode_directly(value: Any, option: int) -> bytes | None:
    """orjson's encoding of ``value`` when it is already ``JSON.stringify``'s, else ``None``.

    Most session values (text, ids, small integers) need no conversion, and checking the
    output takes one regular-expression pass in C instead of a Python call per value.
    """
    try:
        out = orjson.dumps(value, default=_refuse, option=option | _FAST_OPTIONS)
    # Lone surrogates, odd types, integers beyond 2**53, deep nesting.
    except (orjson.JSONEncodeError, TypeError):
        return None
    if out[:1] != b"[" and out[:1] != b"{" and out[:1] != b'"':
        return None  # a bare number: the general path renders it
    for search in _MAY_DIFFER_FROM_JS:
        if search(out):
            return None
    return out


def _encode(value: Any, option: int | None) -> bytes:
    direct = _encode_directly(value, option or 0)
    if direct is not None:
        return direct
    try:
        return orjson.dumps(_convert(value), option=option)
    except RecursionError:
        raise JsonEncodeError(_TOO_DEEP) from None
    except orjson.JSONEncodeError as exc:
        if "Recursion limit" in str(exc):
            raise JsonEncodeError(_TOO_DEEP) from None
        raise


def dumps(value: Any) -> bytes:
    """Encode ``value`` as ``JSON.stringify`` would (UTF-8, no trailing newline).

    :raises JsonEncodeError: if the encoding would not survive the orjson nesting limit.
    """
    return _encode(value, None)


def dumps_items(values: list[Any]) -> bytes:
    """The members of the array ``values`` as ``JSON.stringify`` writes them, comma-separated
    without the brackets: a block of a long array, encoded in as few calls as possible.

    :raises JsonEncodeError: if a value would not survive the orjson nesting limit.
    """
    direct = _encode_directly(values, 0)
    if direct is not None:
        return direct[1:-1]
    return b",".join(map(dumps, values))


def _restringified_float(text: str) -> Any:
    """A float literal as a value orjson writes the way ``JSON.stringify`` writes the number."""
    value = float(text)
    if value.is_integer():  # orjson writes ``1.0``, JavaScript ``1``
        return _float(value)
    # orjson's plain decimal notation is JavaScript's; it takes an exponent only beyond
    # this range (1e-6 and 1e16, say), where its output is looked at.
    if 1e-4 < abs(value) < 1e15 or b"e" not in orjson.dumps(value):
        return value
    return orjson.Fragment(js_number(value))


@cache
def _restringify_decoder() -> Callable[[bytes | bytearray | memoryview], Any]:
    # msgspec hands each float literal to a hook as text (orjson has no such hook); loaded
    # on first use, since most users of this module need only orjson.
    import msgspec

    return msgspec.json.Decoder(float_hook=_restringified_float).decode


# A key ending in a digit (which may be an array index, which JavaScript writes first): in
# orjson's output a quote followed by a colon only ever ends a key.
_KEY_ENDING_IN_DIGIT: Final = re.compile(rb'":(?<=[0-9]":)').search


def loads_to_restringify(data: bytes | bytearray | memoryview) -> Any:
    """Parse a JSON text only to encode it again with :func:`dumps_restringified`: as
    :func:`loads`, except that each float is decoded as what makes orjson write it as
    ``JSON.stringify`` does (an integral one as an ``int``, one orjson writes with an exponent
    pre-rendered), so encoding needs no search of its output for numbers. The values are for
    that encoding only: some floats are not ``float`` objects.

    :raises JsonDecodeError: if the text is not JSON or holds what only :func:`loads` reads
        as ``JSON.parse`` does (a lone surrogate escape, bytes that are not UTF-8).
    """
    decode = _restringify_decoder()
    try:
        return decode(data)
    except (ValueError, RecursionError) as exc:  # msgspec.DecodeError is a ValueError
        raise JsonDecodeError(str(exc)) from None


def dumps_restringified(values: list[Any]) -> bytes | None:
    """The members of ``values``, values decoded by :func:`loads_to_restringify` (or parts of
    them), as ``JSON.stringify`` writes them, comma-separated without the brackets; ``None``
    where orjson alone would write something otherwise (a key that may be an array index, an
    integer beyond 2**53, nesting beyond orjson's limit)."""
    try:
        out = orjson.dumps(values, default=_refuse, option=_FAST_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        return None
    if _KEY_ENDING_IN_DIGIT(out):
        return None
    return out[1:-1]


def dumps_line(value: Any) -> bytes:
    """Encode ``value`` as one session file line: ``JSON.stringify(value) + "\\n"``.

    :raises JsonEncodeError: if the value nests deeper than :data:`MAX_NESTING` levels (the
        reader would skip the line).
    """
    line = _encode(value, orjson.OPT_APPEND_NEWLINE)
    # Nesting deeper than the limit takes an opening and a closing bracket per level.
    if len(line) > 2 * MAX_NESTING and nested_too_deeply(line):
        raise JsonEncodeError(_TOO_DEEP)
    return line
