"""Reading the user's Markdown resources: byte-order mark, line ends, YAML front matter."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from ctxmodes.session.regular_file import read_regular

_BOM = "\ufeff"


def strip_bom(text: str) -> str:
    return text[1:] if text.startswith(_BOM) else text


def read_text(path: Path | str) -> str:
    """The file's text as Pi reads it (UTF-8, invalid bytes replaced, BOM dropped).

    :raises OSError: it cannot be read, or it is not a regular file (a FIFO or a device,
        which could wait or run for ever)."""
    return strip_bom(read_regular(path).decode("utf-8", errors="replace"))


class _CoreSchemaLoader(yaml.SafeLoader):
    """PyYAML speaks YAML 1.1; Pi's ``yaml`` package speaks 1.2, where ``yes``, ``off`` or
    ``1:30`` are strings. Only the 1.2 core schema's booleans, integers and floats are typed."""


_CoreSchemaLoader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag.rsplit(":", 1)[-1] not in ("bool", "int", "float", "timestamp")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _tag, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
):
    _CoreSchemaLoader.add_implicit_resolver(
        f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), list(_first)
    )


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    value = str(loader.construct_scalar(node))
    if value.startswith("0o"):
        return int(value[2:], 8)
    return int(value, 0) if value.startswith("0x") else int(value)


_CoreSchemaLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """``(front matter, body)`` of a Markdown resource, split where Pi splits it.

    :raises yaml.YAMLError: the front matter is not YAML.
    """
    normalized = strip_bom(text).replace("\r\n", "\n").replace("\r", "\n")
    if not normalized.startswith("---"):
        return {}, normalized
    end = normalized.find("\n---", 3)
    if end == -1:
        return {}, normalized
    front, body = normalized[4:end], normalized[end + 4 :].strip()
    if not front:
        return {}, body
    parsed = yaml.load(front, Loader=_CoreSchemaLoader)
    return (parsed if isinstance(parsed, dict) else {}), body
