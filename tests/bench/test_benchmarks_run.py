"""Every benchmark in bench/ still runs: each at its ``--smoke`` size, in its own process.

Benchmarks import the project's internals, so an API change can break one without any other
test noticing; this catches it in the build. Nothing here asserts a figure (a smoke size
measures nothing), only that each benchmark finishes with status 0.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
from run_all import BENCHMARKS  # noqa: E402


def _is_script(path: Path) -> bool:
    tree = ast.parse(path.read_text())
    return any(
        isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body
    )


def test_run_all_lists_every_benchmark() -> None:
    scripts = {path.name for path in BENCH.glob("*.py") if _is_script(path)}
    assert scripts - {"run_all.py"} == set(BENCHMARKS)


# Each benchmark is a process of its own that builds its data: the slow tier (`make test`
# and CI run them; `make check` does not).
@pytest.mark.slow
@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_runs_at_smoke_size(name: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / name), "--smoke"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:] or done.stdout[-3000:]
