from __future__ import annotations

import base64
import io
import itertools
import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from support.images import solid_png
from support.pi_print import API, run_ours, run_pi
from support.timebox import bounded
from support.wire_server import Reply, WireServer, text_stream, tool_call_stream

from ctxmodes.abort import AbortController
from ctxmodes.tools import line_window
from ctxmodes.tools.base import ToolContext, ToolResult
from ctxmodes.tools.files import ReadTool, WriteTool, resolve_path


def text_of(result: ToolResult) -> str:
    block = result.content[0]
    assert block.type == "text"
    return block.text


def read(context: ToolContext, path: str, **extra) -> ToolResult:
    return ReadTool().execute("r", {"path": path, **extra}, context)


def test_resolve_path(tmp_path):
    assert resolve_path("a/../b.txt", tmp_path) == tmp_path / "b.txt"
    assert resolve_path("@notes.md", tmp_path) == tmp_path / "notes.md"
    assert resolve_path("/etc/hosts", tmp_path) == Path("/etc/hosts")
    assert resolve_path("~/x", tmp_path) == Path.home() / "x"
    assert resolve_path("my\u00a0file", tmp_path) == tmp_path / "my file"


# --- read -------------------------------------------------------------------------------


def test_read_returns_the_text_as_is(context, tmp_path):
    (tmp_path / "f.txt").write_text("alpha\nbeta\n")
    result = read(context, "f.txt")
    assert not result.is_error
    assert text_of(result) == "alpha\nbeta\n"


def test_read_with_offset_and_limit_says_how_to_continue(context, tmp_path):
    (tmp_path / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = read(context, "f.txt", offset=3, limit=2)
    assert text_of(result) == "line 3\nline 4\n\n[7 more lines in file. Use offset=5 to continue.]"
    assert text_of(read(context, "f.txt", offset=10)) == "line 10\n"


def test_read_offset_beyond_the_end_is_an_error(context, tmp_path):
    (tmp_path / "f.txt").write_text("one\ntwo")
    result = read(context, "f.txt", offset=5)
    assert result.is_error
    assert text_of(result) == "Offset 5 is beyond end of file (2 lines total)"


def test_read_truncates_long_files_at_2000_lines(context, tmp_path):
    (tmp_path / "big.txt").write_text("\n".join(str(i) for i in range(1, 2501)))
    result = read(context, "big.txt")
    text = text_of(result)
    assert text.endswith("\n2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")
    assert result.details["truncation"]["truncatedBy"] == "lines"
    assert text_of(read(context, "big.txt", offset=2001)).endswith("2500")


def test_read_truncates_at_50kb(context, tmp_path):
    (tmp_path / "wide.txt").write_text(("x" * 99 + "\n") * 1000)
    text = text_of(read(context, "wide.txt"))
    assert text.endswith(
        "[Showing lines 1-512 of 1001 (50.0KB limit). Use offset=513 to continue.]"
    )


def test_read_points_at_bash_for_a_huge_first_line(context, tmp_path):
    (tmp_path / "min.js").write_text("x" * 60000)
    text = text_of(read(context, "min.js"))
    assert text == (
        "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' min.js | head -c 51200]"
    )


def test_read_errors_for_missing_files_and_directories(context, tmp_path):
    missing = read(context, "nope.txt")
    assert missing.is_error
    assert text_of(missing) == "File not found: nope.txt"
    (tmp_path / "dir").mkdir()
    assert "directory" in text_of(read(context, "dir"))


def test_read_returns_images_as_attachments(context, tmp_path):
    png = solid_png(3, 2, (200, 30, 30))
    (tmp_path / "pic.png").write_bytes(png)
    result = read(context, "pic.png")
    assert not result.is_error
    note, image = result.content
    assert note.type == "text"
    assert note.text == "Read image file [image/png]"
    assert image.type == "image"
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data) == png


def test_read_fits_an_image_as_pi_does(context, tmp_path):
    """A BMP converted and a large image shrunk, each with Pi's notes under the type; one
    that does not decode is Pi's omitted message under the type it was read as."""
    bmp = io.BytesIO()
    Image.new("RGB", (3000, 1200), (1, 2, 3)).save(bmp, format="BMP")
    (tmp_path / "wide.bmp").write_bytes(bmp.getvalue())
    (tmp_path / "broken.png").write_bytes(solid_png(200, 200, (0, 0, 0))[:80])
    note, image = read(context, "wide.bmp").content
    assert note.text == (
        "Read image file [image/png]\n[Image converted from image/bmp to image/png.]\n"
        "[Image: original 3000x1200, displayed at 2000x800. Multiply coordinates by 1.50 to "
        "map to original image.]"
    )
    assert image.mime_type == "image/png"
    assert Image.open(io.BytesIO(base64.b64decode(image.data))).size == (2000, 800)
    [omitted] = read(context, "broken.png").content
    assert omitted.text == (
        "Read image file [image/png]\n"
        "[Image omitted: could not be resized below the inline image size limit.]"
    )


def test_read_with_auto_resize_off_only_converts(context, tmp_path):
    bmp = io.BytesIO()
    Image.new("RGB", (3000, 1200), (1, 2, 3)).save(bmp, format="BMP")
    (tmp_path / "wide.bmp").write_bytes(bmp.getvalue())
    result = ReadTool(auto_resize_images=False).execute("r", {"path": "wide.bmp"}, context)
    note, image = result.content
    assert (
        note.text == "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"
    )
    assert Image.open(io.BytesIO(base64.b64decode(image.data))).size == (3000, 1200)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_read_refuses_what_is_not_a_regular_file(context, tmp_path, kind):
    """A FIFO would wait for a writer for ever and ``/dev/zero`` never ends: both are
    refused at once, where a read of either took the agent with it."""
    if kind == "fifo":
        os.mkfifo(tmp_path / "pipe")
        path, what = "pipe", "a FIFO"
    else:
        path, what = "/dev/zero", "a character device"
    result = bounded(lambda: read(context, path), 10)
    assert result.is_error
    assert text_of(result) == f"Not a regular file ({what}): {path}"


@pytest.mark.slow  # writes and reads a 64 MB file
def test_reading_a_large_file_keeps_only_the_window_in_memory(context, tmp_path):
    """A file of 64 MB (a log, say) is read in pieces: the answer is the lines asked for
    and the file's line count, and memory holds a piece at a time, not the file."""
    line = "2026-12-05T07:00:00Z worker 7 handled request é€ in 3 ms\n"
    count = 64 * 1024 * 1024 // len(line.encode())
    with (tmp_path / "big.log").open("w") as out:
        for _ in range(count // 10_000):
            out.write(line * 10_000)
    total = count // 10_000 * 10_000 + 1
    tracemalloc.start()
    try:
        result = read(context, "big.log", offset=total - 2)
        tail_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        head = read(context, "big.log")
        head_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text_of(result) == line * 2
    assert text_of(head).endswith(
        f"[Showing lines 1-{51200 // len(line.encode())} of {total} (50.0KB limit). "
        f"Use offset={51200 // len(line.encode()) + 1} to continue.]"
    )
    assert head.details["truncation"]["totalLines"] == total - 1
    assert head.details["truncation"]["totalBytes"] == (total - 1) * len(line.encode())
    assert max(tail_peak, head_peak) < 16 * 1024 * 1024


def test_read_does_nothing_once_aborted(tmp_path):
    controller = AbortController()
    controller.abort()
    (tmp_path / "f.txt").write_text("x")
    result = read(ToolContext(cwd=tmp_path, signal=controller.signal), "f.txt")
    assert result.is_error
    assert text_of(result) == "Operation aborted"


# --- write ------------------------------------------------------------------------------


def test_write_creates_parents_and_overwrites(context, tmp_path):
    tool = WriteTool()
    result = tool.execute("w", {"path": "a/b/c.txt", "content": "héllo"}, context)
    assert not result.is_error
    assert text_of(result) == "Successfully wrote 6 bytes to a/b/c.txt"
    assert (tmp_path / "a/b/c.txt").read_text() == "héllo"
    tool.execute("w", {"path": "a/b/c.txt", "content": "new"}, context)
    assert (tmp_path / "a/b/c.txt").read_text() == "new"


def test_write_refuses_a_fifo_or_a_device(context, tmp_path):
    """Opening a FIFO to write waits for a reader, for ever when none comes, and a device
    may be the user's terminal: neither is written, and the call ends at once."""
    os.mkfifo(tmp_path / "pipe")
    for path, what in (("pipe", "a FIFO"), ("/dev/null", "a character device")):
        call = {"path": path, "content": "text"}
        result = bounded(lambda call=call: WriteTool().execute("w", call, context), 10)
        assert result.is_error
        assert text_of(result) == f"Not a regular file ({what}): {path}"


def test_write_into_a_file_path_is_an_error(context, tmp_path):
    (tmp_path / "file").write_text("")
    result = WriteTool().execute("w", {"path": "file/child.txt", "content": "x"}, context)
    assert result.is_error
    assert text_of(result).startswith("Cannot write file/child.txt:")


def test_file_urls_resolve(tmp_path):
    assert resolve_path(f"file://{tmp_path}/a%20b.txt", Path("/")) == tmp_path / "a b.txt"


@pytest.mark.pi
def test_read_agrees_with_pi(pi_node, tmp_path, context, monkeypatch):
    """Pi's answers to reads of these files at these offsets and limits, ours read in
    pieces of the usual size and of a few bytes (so that characters, invalid sequences and
    line ends fall across the pieces' edges)."""
    files = {
        "small.txt": "alpha\nbeta\n",
        "empty.txt": "",
        "lines.txt": "".join(f"line {i}\n" for i in range(1, 2601)),
        "wide.txt": ("y" * 99 + "\n") * 700,
        "huge-line.txt": "z" * 60000 + "\nafter\n",
        "utf8.txt": "héllo wörld\n" * 5000,
        "blank-lines.txt": "\n" * 2600,
        "crlf.txt": "one\r\ntwo\r\n" * 1500,
        "no-final-newline.txt": "".join(f"{i}\n" for i in range(2400)) + "last",
        "wide-chars.txt": ("😀" * 30 + "\n") * 600,
        # Nine lines of 5,689 bytes with their newlines: the ninth newline is the 51,201st
        # byte, so the 50 KB limit falls just after the ninth line.
        "cut-after-a-line.txt": ("x" * 5688 + "\n") * 9 + "after\n",
        "cut-before-an-empty-line.txt": ("x" * 5688 + "\n") * 9 + "\n\nafter\n",
    }
    for name, content in files.items():
        (tmp_path / name).write_text(content, newline="")
    invalid = b"ok\xff\xfe\nhalf \xe2\x82\ncut at the end \xf0\x9f\x98"
    (tmp_path / "invalid-utf8.txt").write_bytes(invalid * 1000)
    calls = [
        {"path": name, **extra}
        for name in [*files, "invalid-utf8.txt"]
        for extra in (
            {},
            {"offset": 2},
            {"limit": 3},
            {"offset": 2, "limit": 2500},
            {"offset": 2500},
            {"offset": 2401, "limit": 1},
            {"offset": 2601},
        )
    ]
    answers = pi_node(
        "core/tools/read.js",
        "const tool = mod.createReadToolDefinition(input.cwd);\n"
        "const out = [];\n"
        "for (const call of input.calls) {\n"
        "  try { out.push({ok: await tool.execute('id', call)}); }\n"
        "  catch (e) { out.push({error: e.message}); }\n"
        "}\n"
        "process.stdout.write(JSON.stringify(out));\n",
        {"cwd": str(tmp_path), "calls": calls},
    )
    for chunk_bytes, call_answer in itertools.product(
        (line_window.CHUNK_BYTES, 7), zip(calls, answers, strict=True)
    ):
        monkeypatch.setattr(line_window, "CHUNK_BYTES", chunk_bytes)
        call, answer = call_answer
        ours = ReadTool().execute("id", call, context)
        if "error" in answer:
            assert ours.is_error, call
            assert text_of(ours) == answer["error"], call
        else:
            assert not ours.is_error, call
            expected = answer["ok"]
            assert [
                block.model_dump(by_alias=True, exclude_none=True) for block in ours.content
            ] == (expected["content"]), call
            assert ours.details == expected.get("details"), call


def _tool_results(agent: Path) -> list[dict[str, Any]]:
    [session] = agent.rglob("*.jsonl")
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    return [
        entry["message"]
        for entry in entries
        if entry.get("message", {}).get("role") == "toolResult"
    ]


def _decoded(content: list[dict[str, Any]]) -> list[Any]:
    """A tool result's blocks with each image as its type and decoded size."""
    blocks: list[Any] = []
    for block in content:
        if block["type"] != "image":
            blocks.append(block)
            continue
        with Image.open(io.BytesIO(base64.b64decode(block["data"]))) as image:
            blocks.append((block["mimeType"], image.size, image.format))
    return blocks


@pytest.mark.pi
@pytest.mark.parametrize(
    ("name", "takes_images"),
    [("wide.png", True), ("tall.bmp", False), ("broken.png", True)],
    ids=["resized", "converted-for-a-text-model", "omitted"],
)
def test_read_fits_images_as_the_real_pi_does(
    tmp_path: Path, name: str, takes_images: bool
) -> None:
    """The model reads an image with the ``read`` tool: the result's text (the type, Pi's
    notes, and the note for a model without image input) is Pi's, and so is its image's
    type and decoded size."""
    Image.new("RGB", (3000, 1200), (30, 140, 90)).save(tmp_path / "wide.png")
    Image.new("RGB", (1200, 2600), (200, 200, 20)).save(tmp_path / "tall.bmp")
    (tmp_path / "broken.png").write_bytes(solid_png(200, 200, (0, 0, 0))[:80])
    argv = ["-p", "--model", "loop/m", "Look at it."]
    takes = ["text", "image"] if takes_images else None
    results = {}
    for who, run, agent in (("pi", run_pi, "pi-agent"), ("ctxmodes", run_ours, "agent")):
        replies = [
            Reply(tool_call_stream(API, "read", json.dumps({"path": name}))),
            Reply(text_stream(API, "Seen.")),
        ]
        with WireServer(replies) as server:
            done = run(tmp_path, server.base_url, argv, model_input=takes)
        assert done.returncode == 0, done.stderr
        [result] = _tool_results(tmp_path / agent)
        results[who] = _decoded(result["content"])
    assert results["ctxmodes"] == results["pi"]
    text = results["pi"][0]["text"]
    assert text.startswith("Read image file [image/png]\n")
    assert ("does not support images" in text) is not takes_images
