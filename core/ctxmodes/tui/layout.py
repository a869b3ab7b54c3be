"""The prompt_toolkit application of the terminal session: the live region below the
scrollback, top to bottom the streaming reply, the queued messages, the editor (or a picker)
and the footer, with the style they are drawn in."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

from prompt_toolkit.application import Application
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import (
    DynamicKeyBindings,
    KeyBindingsBase,
    merge_key_bindings,
)
from prompt_toolkit.key_binding.defaults import load_key_bindings
from prompt_toolkit.layout import (
    ConditionalContainer,
    Float,
    FloatContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    Window,
)
from prompt_toolkit.layout.containers import WindowRenderInfo
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.styles import Style

from ctxmodes.tui.keys import key_bindings
from ctxmodes.tui.picker import PICKER_STYLE
from ctxmodes.tui.reflow import ReflowingApplication, reflows

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

    from ctxmodes.tui.app import TerminalSession
    from ctxmodes.tui.keymap import KeyMap

#: The cells of the prompt before each row of the draft (the prompt mark or two spaces).
PROMPT_CELLS: Final = 2


def editor_rows(terminal_rows: int) -> int:
    """The rows the editor shows before it scrolls, and pages by: Pi's, three tenths of
    the terminal's height and at least five."""
    return max(5, terminal_rows * 3 // 10)


def hidden_rows_line(shown: WindowRenderInfo | None) -> StyleAndTextTuples:
    """What the row under a draft taller than the editor says: how many of its rows are
    out of view above and below, in the words of Pi's editor (``↑ 3 more``, ``↓ 2 more``),
    from the editor's frame just drawn."""
    if shown is None:
        return []
    above = shown.vertical_scroll
    below = max(0, shown.content_height - above - shown.window_height)
    told = [f"{arrow} {count} more" for arrow, count in (("↑", above), ("↓", below)) if count]
    return [("class:footer.dim", " " * PROMPT_CELLS + "  ".join(told))]


STYLE = Style.from_dict(
    {
        "live": "",
        "live.dim": "#888888",
        "live.output": "#9e9e9e",
        "queue": "#5fafd7",
        "prompt": "bold #5fafd7",
        "footer": "#a8a8a8",
        "footer.dim": "#707070",
        "footer.warn": "#d7af00 bold",
        "footer.alert": "#d70000 bold",
        "footer.unknown": "#a8a8a8 italic",
        "footer.activity": "#5fafd7",
        **PICKER_STYLE,
    }
)


def picking(session: TerminalSession) -> Condition:
    """Whether a picker holds the keys (it then replaces the editor)."""
    return Condition(lambda: session.picker is not None)


def application_keys(session: TerminalSession) -> KeyBindingsBase:
    """prompt_toolkit's editing keys under the session's, as ``session.keymap`` binds them:
    built again whenever the keymap is replaced (``/reload`` reads ``keybindings.json``
    again), which prompt_toolkit notices by the bindings' version."""
    built: list[tuple[KeyMap, KeyBindingsBase]] = []

    def current() -> KeyBindingsBase:
        keymap = session.keymap
        if not built or built[0][0] is not keymap:
            own = key_bindings(session, picking(session), keymap)
            built[:] = [(keymap, merge_key_bindings([load_key_bindings(), own]))]
        return built[0][1]

    return DynamicKeyBindings(current)


def completions_menu(rows: Callable[[], int]) -> CompletionsMenu:
    """prompt_toolkit's completion menu, at most ``rows()`` rows high, asked at each frame
    (the menu takes a fixed number; its window takes a callable)."""
    menu = CompletionsMenu(scroll_offset=1)
    window = menu.content
    if isinstance(window, Window):
        window.height = lambda: Dimension(min=1, max=rows())
    return menu


def picker_window(session: TerminalSession) -> Window:
    """Where the open picker is drawn, in the editor's place. It takes the focus while a
    picker is open, so that prompt_toolkit's editing keys, which act on the focused buffer,
    leave the draft behind it alone (its own cursor is drawn by the picker)."""
    return Window(
        FormattedTextControl(
            lambda: session.picker.fragments(session.width) if session.picker else [],
            focusable=True,
        ),
        dont_extend_height=True,
        wrap_lines=False,
        always_hide_cursor=True,
    )


def build_application(
    session: TerminalSession, input: Input | None, output: Output | None
) -> Application[None]:
    live = session.live
    search = session.search_toolbar

    def menu_rows() -> int:
        # Read at each frame: ``/reload`` may change it.
        return session.settings.completion_rows

    def editor_height() -> Dimension:
        # The rows shown before the draft scrolls are Pi's (the completion menu's are a
        # setting, ``terminal.completion_rows``).
        shown = editor_rows(session.height)
        state = session.buffer.complete_state
        if state is None or not state.completions:
            return Dimension(min=1, max=shown)
        # The completion menu floats below the cursor, inside this layout: the editor grows
        # to hold it, so at the bottom of the screen the terminal scrolls up to make room
        # instead of the menu shrinking to the rows that happen to be left.
        rows = min(menu_rows(), len(state.completions)) + 1
        return Dimension(min=rows, max=max(rows, shown))

    editor = Window(
        session.editor_control,
        height=editor_height,
        # The control wraps the draft itself, at spaces as Pi's editor does.
        wrap_lines=False,
        dont_extend_height=True,
        get_line_prefix=lambda row, wrap: [
            ("class:prompt", "\u203a " if row == 0 else " " * PROMPT_CELLS)
        ],
    )
    a_picker_shows = picking(session)

    def draft_overflows() -> bool:
        return session.editor_control.row_count(session.width) > editor_rows(session.height)

    body = HSplit(
        [
            ConditionalContainer(
                Window(
                    FormattedTextControl(lambda: live.fragments(session.width)),
                    wrap_lines=True,
                    dont_extend_height=True,
                ),
                filter=Condition(live.shows_reply),
            ),
            ConditionalContainer(
                Window(
                    FormattedTextControl(lambda: live.queue_fragments(session.keymap)),
                    dont_extend_height=True,
                ),
                filter=Condition(live.shows_queue),
            ),
            ConditionalContainer(editor, filter=~a_picker_shows),
            ConditionalContainer(
                # Drawn after the editor, so from the frame the editor has just drawn.
                Window(
                    FormattedTextControl(lambda: hidden_rows_line(editor.render_info)),
                    height=1,
                ),
                filter=~a_picker_shows & Condition(draft_overflows),
            ),
            ConditionalContainer(search, filter=~a_picker_shows),
            ConditionalContainer(session.picker_window, filter=a_picker_shows),
            Window(
                FormattedTextControl(lambda: session.status.fragments(session.width)),
                dont_extend_height=True,
                wrap_lines=False,
            ),
        ]
    )
    root = FloatContainer(
        body,
        floats=[
            Float(
                xcursor=True,
                ycursor=True,
                content=completions_menu(menu_rows),
            )
        ],
    )
    if output is None:
        from prompt_toolkit.output.defaults import create_output

        output = create_output()
    if isinstance(output, Vt100_Output):
        # No cursor-position requests: blocks are printed to the scrollback between frames,
        # out of raw mode, and a report answered then is echoed onto the prompt line. Nothing
        # here needs the position: the layout takes the height it asks for.
        output.enable_cpr = False
    app = ReflowingApplication(
        layout=Layout(root, focused_element=editor),
        key_bindings=application_keys(session),
        style=STYLE,
        full_screen=False,
        erase_when_done=False,
        input=input,
        output=output,
    )
    app.reflowing_terminal = reflows(os.environ)
    # Keys redraw at once; the agent's events are throttled by the session instead.
    app.max_render_postpone_time = None
    # Esc is a key of its own here: do not wait long for it to start an Alt sequence.
    app.ttimeoutlen = escape_timeout(os.environ)
    app.timeoutlen = EDITOR_KEY_WAIT
    return app


#: How long a key that starts a longer one of the editor (Ctrl+X Ctrl+E) waits for the rest.
EDITOR_KEY_WAIT: Final = 0.15
#: The same while a picker is open: its keys are single keys and Alt keys, and an Alt key's
#: Esc is told from a lone Esc by the wait above (``ttimeoutlen``), as Pi tells it; waiting
#: again would only hold a lone Esc back, or read Esc and a key pressed soon after as Alt.
PICKER_KEY_WAIT: Final = 0.0


#: How long a lone Esc waits for the rest of an Alt sequence, in milliseconds, as Pi's
#: terminal waits: longer over SSH, where the bytes of one key may arrive apart.
ESCAPE_TIMEOUT_MS: Final = 10
SSH_ESCAPE_TIMEOUT_MS: Final = 100


def escape_timeout(environ: Mapping[str, str]) -> float:
    """Seconds a lone Esc waits before it counts as Escape, as Pi decides it:
    ``PI_TUI_ESC_TIMEOUT`` (milliseconds) when it is a positive number, else 100 ms over
    SSH (``SSH_CONNECTION`` or ``SSH_TTY`` set), else 10 ms."""
    try:
        configured = float(environ.get("PI_TUI_ESC_TIMEOUT", ""))
    except ValueError:
        configured = math.nan
    if math.isfinite(configured) and configured > 0:
        return configured / 1000
    if environ.get("SSH_CONNECTION") or environ.get("SSH_TTY"):
        return SSH_ESCAPE_TIMEOUT_MS / 1000
    return ESCAPE_TIMEOUT_MS / 1000
