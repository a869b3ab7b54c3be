"""The terminal's editor drawing a draft in Pi's rows, against prompt_toolkit drawing it its
own way, one frame after each key, measured side by side in one run.

Run: ``.venv/bin/python bench/editor_rows.py [--lines 1,20,200,2000] [--keys N]``

For each draft size (``--lines`` lines of about 130 characters, wider than the 100 columns drawn
at, so every line wraps), a character is typed at the draft's end ``--keys`` times, and
after each the editor's content is made as a frame makes it (``create_content``) and its
shown rows are styled. The anchor is prompt_toolkit's own ``BufferControl`` on the same
draft, which wraps where the window's edge falls; ctxmodes' ``WrappedBufferControl`` wraps at
spaces as Pi's editor does. Printed: milliseconds a frame for each, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from prompt_toolkit.application import Application
from prompt_toolkit.application.current import set_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.output import DummyOutput
from smoke import parse_args

from ctxmodes.tui.editor_rows import WrappedBufferControl

LINE = "the quick brown fox jumps over the lazy dog and keeps on running " * 2
COLUMNS, ROWS = 100, 12


def frame_ms(control: BufferControl, buffer: Buffer, keys: int) -> float:
    """Milliseconds a frame takes after each typed character, ``control`` drawing
    ``buffer``."""
    app: Application[None] = Application(layout=Layout(Window(control)), output=DummyOutput())
    with set_app(app):
        control.create_content(COLUMNS, ROWS)  # the first frame wraps every line
        started = time.perf_counter()
        for _ in range(keys):
            buffer.insert_text("x")
            content = control.create_content(COLUMNS, ROWS)
            for row in range(max(0, content.line_count - ROWS), content.line_count):
                content.get_line(row)
        return (time.perf_counter() - started) / keys * 1000


async def measure(lines: int, keys: int) -> tuple[float, float]:
    text = "\n".join(f"{number} {LINE}" for number in range(lines))
    times = []
    for make in (BufferControl, lambda buffer: WrappedBufferControl(buffer, reserved=2)):
        buffer = Buffer(multiline=True)
        buffer.document = Document(text, len(text))
        times.append(frame_ms(make(buffer), buffer, keys))
    return times[0], times[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", default="1,20,200,2000,20000", help="draft sizes, in lines")
    parser.add_argument("--keys", type=int, default=50, help="characters typed at each size")
    args = parse_args(parser, lines="1,20", keys=3)
    print(f"a frame after each key, {COLUMNS} columns, lines of {len(LINE) + 2} characters")
    print(f"  {'lines':>7}  {'prompt_toolkit':>14}  {'ctxmodes':>9}  ratio")
    for lines in (int(size) for size in args.lines.split(",")):
        anchor, ours = asyncio.run(measure(lines, args.keys))
        print(f"  {lines:>7}  {anchor:>11.2f} ms  {ours:>6.2f} ms  {ours / anchor:5.1f}x")


if __name__ == "__main__":
    main()
