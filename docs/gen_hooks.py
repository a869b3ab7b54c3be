"""Generate docs/hooks.md, the hook reference, from the docstrings in ctxmodes.hookspecs.

Run ``.venv/bin/python docs/gen_hooks.py > docs/hooks.md`` after changing a hookspec; a test
fails while the file and the specs disagree.
"""

from __future__ import annotations

import inspect
import sys

from ctxmodes import hookspecs

SPEC_MARK = f"{hookspecs.PROJECT_NAME}_spec"


def hook_functions() -> list[tuple[str, object]]:
    """Every hookspec, in source order."""
    found = [
        (name, obj)
        for name, obj in vars(hookspecs).items()
        if inspect.isfunction(obj) and hasattr(obj, SPEC_MARK)
    ]
    return sorted(found, key=lambda item: inspect.getsourcelines(item[1])[1])  # type: ignore[arg-type]


def signature_line(name: str, func: object) -> str:
    """The signature as written in the source (annotations are strings there)."""
    sig = inspect.signature(func)  # type: ignore[arg-type]
    params = ", ".join(f"{p.name}: {p.annotation}" for p in sig.parameters.values())
    return f"def {name}({params}) -> {sig.return_annotation}"


def render() -> str:
    lines = [
        "# Hook reference",
        "",
        "Generated from `core/ctxmodes/hookspecs.py` by `docs/gen_hooks.py`; do not edit by hand.",
        "",
        inspect.cleandoc(hookspecs.__doc__ or ""),
        "",
    ]
    for name, func in hook_functions():
        options = getattr(func, SPEC_MARK)
        flags = [key for key in ("firstresult", "historic") if options.get(key)]
        lines += [f"## `{name}`", "", "```python", signature_line(name, func), "```", ""]
        if flags:
            lines += [f"Options: {', '.join(flags)}.", ""]
        lines += [inspect.cleandoc(func.__doc__ or ""), ""]  # type: ignore[attr-defined]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(render())
