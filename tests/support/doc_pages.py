"""The README and the documentation site's pages, and the code blocks in them."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: What the pages describe of the project's own configuration is checked against this.
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
#: The test markers pyproject.toml registers (``--strict-markers`` refuses any other).
MARKERS = frozenset(
    line.partition(":")[0] for line in PYPROJECT["tool"]["pytest"]["ini_options"]["markers"]
)

#: A fenced block: its language word, then everything up to the closing fence.
FENCE = re.compile(r"^```(\S*)\n(.*?)^```$", re.S | re.M)
#: ``<!-- example: NAME -->`` on the line before a block names it for the test that runs it.
EXAMPLE_MARK = re.compile(r"<!-- example: ([\w-]+) -->\n$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    body: str
    #: The name an ``<!-- example: NAME -->`` line gives it, if any.
    example: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def first_line(self) -> str:
        return self.body.partition("\n")[0].strip()


def pages() -> list[Path]:
    """The README and every page of the site (the example distribution's files are not pages)."""
    site = [path for path in sorted(DOCS.rglob("*.md")) if "example-mode" not in path.parts]
    return [ROOT / "README.md", *site]


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()]
        mark = EXAMPLE_MARK.search(before)
        found.append(
            Block(
                page=page,
                line=before.count("\n") + 1,
                language=match.group(1),
                body=match.group(2),
                example=mark.group(1) if mark else None,
            )
        )
    return found


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


def example(name: str) -> Block:
    """The one block marked ``<!-- example: name -->``."""
    (found,) = [block for block in all_blocks() if block.example == name]
    return found
