"""``@hookimpl``: the mark of a hook implementation, set without importing pluggy.

pluggy's ``HookimplMarker`` stores a hook implementation's options in one attribute of the
function, ``<project>_impl``, which a plugin manager reads back when the plugin is registered
(``PluginManager.parse_hookimpl_opts``). This marker stores the same options in the same
attribute, so a manager cannot tell its work from pluggy's own; but a plugin module that only
marks its hooks is imported without pluggy and the ``inspect`` module pluggy imports, which
``ctxmodes --help`` would otherwise pay for every plugin. ``tests/core/test_hook_marker.py``
holds it to pluggy's marker.

Internal module: plugins import ``hookimpl`` from :mod:`ctxmodes`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

#: pluggy's project name of ctxmodes' hooks: the marker attribute is ``ctxmodes_impl``.
PROJECT_NAME = "ctxmodes"
#: The attribute pluggy reads a hook implementation's options from.
IMPL_ATTRIBUTE = f"{PROJECT_NAME}_impl"

_F = TypeVar("_F", bound=Callable[..., object])


class HookimplMarker:
    """Marks functions as ctxmodes hook implementations, as ``pluggy.HookimplMarker`` does
    (same arguments, same result)."""

    __slots__ = ()

    @overload
    def __call__(
        self,
        function: _F,
        hookwrapper: bool = ...,
        optionalhook: bool = ...,
        tryfirst: bool = ...,
        trylast: bool = ...,
        specname: str | None = ...,
        wrapper: bool = ...,
    ) -> _F: ...

    @overload
    def __call__(
        self,
        function: None = ...,
        hookwrapper: bool = ...,
        optionalhook: bool = ...,
        tryfirst: bool = ...,
        trylast: bool = ...,
        specname: str | None = ...,
        wrapper: bool = ...,
    ) -> Callable[[_F], _F]: ...

    def __call__(
        self,
        function: _F | None = None,
        hookwrapper: bool = False,
        optionalhook: bool = False,
        tryfirst: bool = False,
        trylast: bool = False,
        specname: str | None = None,
        wrapper: bool = False,
    ) -> _F | Callable[[_F], _F]:
        options: dict[str, Any] = {
            "wrapper": wrapper,
            "hookwrapper": hookwrapper,
            "optionalhook": optionalhook,
            "tryfirst": tryfirst,
            "trylast": trylast,
            "specname": specname,
        }

        def mark(marked: _F) -> _F:
            setattr(marked, IMPL_ATTRIBUTE, dict(options))
            return marked

        return mark if function is None else mark(function)


hookimpl = HookimplMarker()
