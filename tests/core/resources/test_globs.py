"""Pi's glob patterns against the ``minimatch`` Pi itself runs, for the shapes that Pi's
``skills`` and ``prompts`` entries take."""

from __future__ import annotations

import json
import random
import subprocess

import pytest
from support.pi_oracle import require_node, require_pi_modules

from ctxmodes.resources.globs import glob_matches

pytestmark = pytest.mark.pi

PATTERNS = [
    "*",
    "*.md",
    "**",
    "**/*.md",
    "skills/**",
    "skills/**/SKILL.md",
    "a/**/b",
    "**/draft*",
    "draft-?.md",
    "[a-c]*.md",
    "[!a-c]*.md",
    "[[:digit:]]*",
    "*.{md,txt}",
    "v{1..3}.md",
    "{a,b{c,d}}/x.md",
    "\\*.md",
    ".hidden/*",
    "*/.hidden.md",
    "!*.md",
    "#comment",
    "",
    "!",
    "!!",
    "/abs/**/x.md",
    "prompts/",
    "***",
    "a*b",
    "*[]",
    "!**/test/**",
    "**/*",
    "../shared/*",
    "../**/x.md",
    "skills/*/SKILL.md",
    "a/**/",
    "[x-]*",
    "[]a]*",
    "x.[mt][dx]*",
    "*.m?",
    "[[:alpha:]][[:alnum:]-]*",
    "\\[a].md",
    "{,a/}x.md",
    "**/.hidden/**",
    "**/.*",
    "a/**/b/**",
    "a/**/**/b",
    "+(a|b).md",
    "@(x|draft-*).md",
    "?(v)[0-9].md",
    "*(a|b)",
    "!(x).md",
    "!(draft*)",
    "a!(-)b",
    "*.!(md)",
    "@(skills|a)/**",
    "(x).md",
    "+(a|b",
    "@(.b|c)",
    "!(x)",
    "*(.x).md",
]
PATHS = [
    "x.md",
    ".x.md",
    "skills",
    "skills/a/SKILL.md",
    "skills/.h/SKILL.md",
    "a/b",
    "a/c/b",
    "a/.c/b",
    "draft-1.md",
    "notes/draft-two.md",
    "b.md",
    "d.md",
    "1st.md",
    "x.txt",
    "v2.md",
    "v4.md",
    "bd/x.md",
    "a/x.md",
    "*.md",
    ".hidden/x.md",
    "y/.hidden.md",
    "/abs/q/x.md",
    "/abs/x.md",
    "prompts",
    "../shared/x.md",
    "ab",
    "a-b",
    "",
    "skills/test/a/SKILL.md",
    "/",
    "a/",
    "]b",
    "-x",
    "[a].md",
    ".hidden/y/z",
    "a/b/c/b/d",
    "a/b/b",
    "aab.md",
    "ba.md",
    "4.md",
    "v7.md",
    "abab",
    "(x).md",
    "+(a|b",
    ".b",
]


def minimatch_answers(cases: list[tuple[str, str]]) -> list[bool]:
    node = require_node()
    modules = require_pi_modules()
    script = (
        "const { minimatch } = await import(process.argv[1]);"
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(cases.map(([p, g]) => minimatch(p, g))));"
    )
    entry = modules / "minimatch" / "dist" / "esm" / "index.js"
    result = subprocess.run(
        [node, "--input-type=commonjs", "-e", f"(async () => {{ {script} }})()", entry.as_uri()],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
    )
    answers: list[bool] = json.loads(result.stdout)
    return answers


def _differing(cases: list[tuple[str, str]]) -> list[tuple[str, str, bool]]:
    """The cases where ctxmodes answers otherwise than minimatch, with minimatch's answer."""
    expected = minimatch_answers(cases)
    return [
        (path, pattern, want)
        for (path, pattern), want in zip(cases, expected, strict=True)
        if glob_matches(path, pattern) != want
    ]


def test_patterns_match_as_minimatch_matches_them() -> None:
    cases = [(path, pattern) for pattern in PATTERNS for path in PATHS]
    assert _differing(cases) == []


#: Pieces of random patterns and paths: wildcards, classes, braces, dots, a leading ``!``.
#: Extended globs are held to minimatch by the table above: at random they meet minimatch's
#: quirks next to dot names (``?(a)*`` matches ``.x`` there), which ctxmodes does not copy.
PATTERN_PIECES = ["a", "b", ".", "/", "*", "**", "?", "[ab]", "[!a]", "{a,b}", "{1..3}",
                  "!", "x", "-", ".md", "\\*"]  # fmt: skip
PATH_PIECES = ["a", "b", ".", "/", "x", "-", ".md", "ab", ".a", "2", "*"]


def test_random_patterns_match_as_minimatch_matches_them() -> None:
    chosen = random.Random(20261202)
    cases = [
        (
            "".join(chosen.choice(PATH_PIECES) for _ in range(chosen.randint(1, 5))),
            "".join(chosen.choice(PATTERN_PIECES) for _ in range(chosen.randint(1, 5))),
        )
        for _ in range(3000)
    ]
    assert _differing(cases) == []
