"""ctxmodes' ``@hookimpl`` marks a function exactly as pluggy's own marker does."""

from __future__ import annotations

import itertools

import pluggy
import pytest

import ctxmodes.hookspecs
from ctxmodes import hookimpl
from ctxmodes.hook_marker import IMPL_ATTRIBUTE
from ctxmodes.hookspecs import PROJECT_NAME

PLUGGY = pluggy.HookimplMarker(PROJECT_NAME)
FLAGS = ("hookwrapper", "optionalhook", "tryfirst", "trylast", "wrapper")


def marked_by(marker, **options):
    def function(register):
        return None

    return getattr(marker(**options)(function) if options else marker(function), IMPL_ATTRIBUTE)


@pytest.mark.parametrize(
    "options",
    [
        {},
        *({flag: True} for flag in FLAGS),
        {"specname": "ctx_register_modes"},
        *(dict.fromkeys(pair, True) for pair in itertools.combinations(FLAGS, 2)),
    ],
)
def test_the_mark_is_pluggys(options):
    assert marked_by(hookimpl, **options) == marked_by(PLUGGY, **options)


def test_one_marker_is_exported_from_the_package_and_the_hookspecs():
    assert hookimpl is ctxmodes.hookspecs.hookimpl


def test_a_manager_calls_what_it_marks_with_its_options():
    seen = []

    class Early:
        @hookimpl(tryfirst=True)
        def ctx_register_modes(self, register):
            seen.append("early")

    class Late:
        @hookimpl(specname="ctx_register_modes")
        def declare(self, register):
            seen.append("late")

    from ctxmodes.testing.plugin import isolated_plugin_manager

    isolated_plugin_manager(Late(), Early()).hook.ctx_register_modes(register=print)
    assert seen == ["early", "late"]
