"""The headless UI of the command line and batch runs: notices printed as they come, after
their level, their control characters shown and never obeyed; errors left to whoever
reports them as the command's failure when it says so."""

from __future__ import annotations

import io

from ctxmodes.ui import HeadlessUI


def test_a_notice_is_printed_after_its_level_and_its_controls_are_shown() -> None:
    echo = io.StringIO()
    ui = HeadlessUI(echo=echo)
    ui.notify("saved")
    ui.notify("a \x1b]0;title\x07 b\rc", "warning")
    assert echo.getvalue() == "saved\nwarning: a \\u001b]0;title\\u0007 b\\u000dc\n"
    assert ui.notifications[1] == ("warning", "a \x1b]0;title\x07 b\rc")


def test_errors_are_kept_but_not_printed_when_the_command_reports_them() -> None:
    echo = io.StringIO()
    ui = HeadlessUI(echo=echo, echo_errors=False)
    ui.notify("it failed", "error")
    ui.notify("careful", "warning")
    assert echo.getvalue() == "warning: careful\n"
    assert ui.notifications == [("error", "it failed"), ("warning", "careful")]
