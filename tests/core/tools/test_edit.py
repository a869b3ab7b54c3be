"""The ``edit`` tool: Pi 0.85's arguments, matching, errors and details.

The differential test runs Pi's own tool (``core/tools/edit.js`` of the installed package)
and ours on the same corpus and compares the result text, ``details`` and the bytes left on
disk, case by case.
"""

from __future__ import annotations

import base64
import os
import random
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import pi_node_modules
from support.timebox import bounded

from ctxmodes.abort import AbortController
from ctxmodes.tools.base import ToolContext, ToolResult
from ctxmodes.tools.edit_match import normalize_for_fuzzy_match
from ctxmodes.tools.files import EditTool
from ctxmodes.tools.line_diff import diff_lines, display_diff, unified_patch


def run_edit(context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
    return EditTool().execute("e", arguments, context)


def text_of(result: ToolResult) -> str:
    block = result.content[0]
    assert block.type == "text"
    return block.text


def one(old: str, new: str) -> dict[str, Any]:
    return {"path": "f.txt", "edits": [{"oldText": old, "newText": new}]}


def many(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"path": "f.txt", "edits": [{"oldText": o, "newText": n} for o, n in pairs]}


CODE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
LONG = "".join(f"line {i}\n" for i in range(1, 41))

#: (name, file content or None for no file, arguments)
CORPUS: list[tuple[str, str | bytes | None, dict[str, Any]]] = [
    ("exact", CODE, one("return 2", "return 3")),
    ("exact multi-line", CODE, one("def g():\n    return 2", "def h():\n    return 4")),
    ("insert lines", CODE, one("    return 1\n", "    x = 1\n    return x\n")),
    ("delete everything", "only\n", one("only\n", "")),
    ("no final newline", "a\nb\nc", one("c", "C")),
    ("trailing-space drift", "alpha  \nbeta\t\ngamma\n", one("alpha\nbeta", "ALPHA\nBETA")),
    (
        "drift keeps untouched lines",
        "keep  \nx = 'a'  \nkeep  \n",
        one("x = 'a'", "x = 'b'"),
    ),
    ("quote drift", "say(\u201chello\u201d)\nit\u2019s\n", one('say("hello")', 'say("bye")')),
    ("single quote drift", "name = \u2018x\u2019\n", one("name = 'x'", "name = 'y'")),
    ("dash and space drift", "a \u2013 b\u00a0c\n", one("a - b c", "a + b c")),
    ("nfkc drift", "\ufb01le = 1\n", one("file = 1", "file = 2")),
    ("astral before a drifted match", "\U0001f600 x  \ny\n", one("x\ny", "X\nY")),
    ("ambiguous", "return 1\nreturn 1\n", one("return 1", "return 0")),
    ("ambiguous after drift", "v = 1  \nv = 1\n", one("v = 1\n", "v = 2\n")),
    ("whitespace-only oldText", "ab\n\U0001f600\n", one("  ", "x")),
    ("missing", CODE, one("return 9", "x")),
    ("empty oldText", CODE, one("", "x")),
    ("identical", "same\n", one("same", "same")),
    ("crlf and bom", "\ufeffone\r\ntwo\r\nthree\r\n", one("two\nthree", "2\n3")),
    ("crlf drift", "one  \r\ntwo\r\n", one("one\ntwo", "1\n2")),
    ("lone cr", "a\rb\rc\n", one("b", "B")),
    ("multi exact", LONG, many(("line 3\n", "LINE 3\n"), ("line 30\n", "LINE 30\n"))),
    ("multi near hunks", LONG, many(("line 3\n", "3\n"), ("line 9\n", "9\n"))),
    ("multi one drifted", "a  \nb\nc\n", many(("a\nb", "A\nB"), ("c", "C"))),
    ("multi same line", "x = 1; y = 2\n", many(("x = 1", "x = 3"), ("y = 2", "y = 4"))),
    ("multi missing", CODE, many(("return 1", "r1"), ("nope", "r2"))),
    ("multi ambiguous", "k\nk\nz\n", many(("z", "Z"), ("k", "K"))),
    ("multi empty", CODE, many(("return 1", "r1"), ("", "r2"))),
    ("overlap", "abcdef\n", many(("abcd", "1"), ("cdef", "2"))),
    ("multi identical", "p\nq\n", many(("p", "p"), ("q", "q"))),
    ("repeated lines", "a\nb\na\nb\na\n", one("b\na\nb", "c")),
    ("legacy arguments", CODE, {"path": "f.txt", "oldText": "return 1", "newText": "return 5"}),
    (
        "legacy plus edits",
        CODE,
        {
            "path": "f.txt",
            "edits": [{"oldText": "return 1", "newText": "r1"}],
            "oldText": "return 2",
            "newText": "r2",
        },
    ),
    (
        "edits as a JSON string",
        CODE,
        {"path": "f.txt", "edits": '[{"oldText": "return 1", "newText": "r"}]'},
    ),
    ("edits as one object", CODE, {"path": "f.txt", "edits": {"oldText": "f()", "newText": "k()"}}),
    ("no edits", CODE, {"path": "f.txt", "edits": []}),
    ("missing file", None, one("a", "b")),
    # Argument validation, as Pi's agent loop does it before the tool runs.
    ("no arguments", CODE, {}),
    ("no path", CODE, {"edits": [{"oldText": "f()", "newText": "k()"}]}),
    ("edits a number", CODE, {"path": "f.txt", "edits": 5}),
    ("edits null", CODE, {"path": "f.txt", "edits": None}),
    ("edit without newText", CODE, {"path": "f.txt", "edits": [{"oldText": "f()"}]}),
    ("edit without either", CODE, {"path": "f.txt", "edits": [{}, {"newText": {}}]}),
    (
        "scalars become text",
        "x = 1\ntrue\n",
        {
            "path": "f.txt",
            "edits": [{"oldText": 1, "newText": 2}, {"oldText": True, "newText": None}],
        },
    ),
    (
        "objects where text belongs",
        CODE,
        {"path": {"a": 1}, "edits": [{"oldText": {}, "newText": [1, 2.5]}]},
    ),
    ("edits not objects", CODE, {"path": "f.txt", "edits": [None, "s", [], 7]}),
    ("edits a string of a bad edit", CODE, {"path": "f.txt", "edits": '{"oldText": "a"}'}),
    ("edits a string of no JSON", CODE, {"path": "f.txt", "edits": "[oops"}),
    ("arguments an array", CODE, []),
    (
        "numbers and astral text shown as JavaScript prints them",
        CODE,
        {
            "path": "f.txt",
            "edits": [{"oldText": "\U0001f600 \u2028"}],
            "big": 12345678901234567890,
            "small": 1e-7,
            "whole": 2.0,
            "nested": {"list": [], "map": {}},
        },
    ),
    (
        "legacy pair with a broken edit",
        CODE,
        {"path": "f.txt", "edits": [{"oldText": 3}], "oldText": "f()", "newText": "k()"},
    ),
]


def _write_case(root: Path, content: str | bytes | None) -> None:
    root.mkdir()
    if content is not None:
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        (root / "f.txt").write_bytes(data)


def _file_bytes(root: Path) -> str | None:
    target = root / "f.txt"
    return base64.b64encode(target.read_bytes()).decode() if target.exists() else None


PI_EDIT = """
const ai = await import(input.piAi);
const out = [];
for (const c of input.cases) {
  const tool = mod.createEditToolDefinition(c.cwd);
  // As Pi's agent loop: prepare, validate (and convert) against the schema, then execute.
  const prepared = tool.prepareArguments(structuredClone(c.arguments));
  let answer;
  try {
    const args = ai.validateToolArguments(tool, {name: 'edit', arguments: prepared});
    const result = await tool.execute('id', args, undefined, undefined, {cwd: c.cwd});
    answer = {ok: {content: result.content, details: result.details}};
  } catch (e) {
    answer = {error: e.message};
  }
  let bytes = null;
  try { bytes = readFileSync(c.cwd + '/f.txt').toString('base64'); } catch {}
  out.push({...answer, bytes});
}
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.pi
def test_edit_agrees_with_pi(pi_node, tmp_path):
    cases = []
    for index, (_name, content, arguments) in enumerate(CORPUS):
        _write_case(tmp_path / f"pi-{index}", content)
        _write_case(tmp_path / f"ours-{index}", content)
        cases.append({"cwd": str(tmp_path / f"pi-{index}"), "arguments": arguments})
    pi_ai = pi_node_modules() / "@earendil-works" / "pi-ai" / "dist" / "index.js"
    answers = pi_node("core/tools/edit.js", PI_EDIT, {"cases": cases, "piAi": pi_ai.as_uri()})
    for index, ((name, _content, arguments), answer) in enumerate(
        zip(CORPUS, answers, strict=True)
    ):
        root = tmp_path / f"ours-{index}"
        ours = run_edit(ToolContext(cwd=root, signal=AbortController().signal), arguments)
        if "error" in answer:
            assert ours.is_error, name
            assert text_of(ours) == answer["error"], name
        else:
            assert not ours.is_error, (name, text_of(ours))
            expected = answer["ok"]
            assert [b.model_dump(exclude_none=True) for b in ours.content] == expected["content"], (
                name
            )
            assert ours.details == expected["details"], name
        assert _file_bytes(root) == answer["bytes"], name


PI_DIFF = """
const out = input.pairs.map(([a, b]) => ({
  patch: mod.generateUnifiedPatch('p', a, b),
  display: mod.generateDiffString(a, b),
  fuzzy: mod.normalizeForFuzzyMatch(a),
}));
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.pi
def test_line_diffs_agree_with_pi_on_random_texts(pi_node):
    rng = random.Random(15)
    alphabet = ["a\n", "b\n", "c\n", "a", "\n", "  \n", "x \u201cq\u201d\n", "\u2014\n"]
    pairs = []
    for _ in range(300):
        old = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        new = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        pairs.append((old, new))
    answers = pi_node("core/tools/edit-diff.js", PI_DIFF, {"pairs": pairs})
    for (old, new), answer in zip(pairs, answers, strict=True):
        assert unified_patch("p", old, new) == answer["patch"], (old, new)
        diff, first = display_diff(old, new)
        assert {"diff": diff, "firstChangedLine": first} == {
            "diff": answer["display"]["diff"],
            "firstChangedLine": answer["display"].get("firstChangedLine"),
        }, (old, new)
        assert normalize_for_fuzzy_match(old) == answer["fuzzy"]


def test_a_drifted_edit_rewrites_only_the_lines_it_touches(context, tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("keep  \nx = \u2018a\u2019  \nkeep\u00a0 \n")
    result = run_edit(context, one("x = 'a'", "x = 'b'"))
    assert text_of(result) == "Successfully replaced 1 block(s) in f.txt."
    # The touched line comes from the normalised text; the others keep their exact bytes.
    assert target.read_text() == "keep  \nx = 'b'\nkeep\u00a0 \n"


def test_multiple_edits_match_the_original_not_each_other(context, tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("a = 1\nb = 2\n")
    result = run_edit(context, many(("a = 1", "b = 2"), ("b = 2", "c = 3")))
    assert not result.is_error
    assert target.read_text() == "b = 2\nc = 3\n"
    assert result.details["firstChangedLine"] == 1


def test_a_failed_call_changes_nothing(context, tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("k\nk\n")
    result = run_edit(context, many(("k\nk", "x"), ("absent", "y")))
    assert result.is_error
    assert text_of(result).startswith("Could not find edits[1] in f.txt.")
    assert target.read_text() == "k\nk\n"


def test_non_utf8_files_are_refused_rather_than_rewritten(context, tmp_path):
    target = tmp_path / "f.txt"
    target.write_bytes(b"caf\xe9\n")
    result = run_edit(context, one("caf", "tea"))
    assert text_of(result) == "Cannot edit f.txt: it is not UTF-8 text"
    assert target.read_bytes() == b"caf\xe9\n"


def test_the_schema_is_pis_edits_list_inline():
    parameters = EditTool().parameters
    assert parameters["required"] == ["path", "edits"]
    item = parameters["properties"]["edits"]["items"]
    assert item["required"] == ["oldText", "newText"]
    assert "$defs" not in parameters
    assert "$ref" not in str(parameters)


def test_diff_lines_prefers_jsdiffs_hunks():
    # Two minimal diffs exist; jsdiff (and so Pi) removes the first "a", not the last.
    changes = diff_lines("a\nb\na\n", "b\na\n")
    assert [(c.removed, c.added, c.value) for c in changes] == [
        (True, False, "a\n"),
        (False, False, "b\na\n"),
    ]


def test_numbers_beyond_a_double_become_javascripts_text() -> None:
    from ctxmodes.tools.pi_validation import validate_arguments

    schema = EditTool().parameters
    arguments = {"path": 10**400, "edits": [{"oldText": float("-inf"), "newText": 1e21}]}
    converted = validate_arguments("edit", schema, arguments)
    assert converted == {
        "path": "Infinity",
        "edits": [{"oldText": "-Infinity", "newText": "1e+21"}],
    }
    assert arguments["path"] == 10**400  # the call's own arguments are left as they came


def test_editing_a_device_or_a_fifo_is_refused(context, tmp_path):
    """Neither is read: ``/dev/zero`` never ends and a FIFO waits for a writer."""
    os.mkfifo(tmp_path / "pipe")
    for path, what in (("/dev/zero", "a character device"), ("pipe", "a FIFO")):
        arguments = {"path": path, "edits": [{"oldText": "a", "newText": "b"}]}
        result = bounded(lambda arguments=arguments: run_edit(context, arguments), 10)
        assert result.is_error
        assert text_of(result) == f"Not a regular file ({what}): {path}"
