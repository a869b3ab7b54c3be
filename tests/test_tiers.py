"""The test tiers: tests/conftest.py marks a test by the real components its fixtures start,
so ``make check`` (the fast tier) never starts Postgres or the real Pi, and keeps the tests
sharing one Postgres on one pytest-xdist worker."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test runs pytest in processes of its own

ROOT = Path(__file__).resolve().parents[1]
STORAGE = "tests/plugins/remote/service/test_storage.py"
READER = "tests/core/session/test_reader.py"

#: Prints each collected test with its pytest-xdist group and its tiers.
SHOW_PLUGIN = """
def pytest_collection_finish(session):
    for item in session.items:
        (group,) = [mark.args[0] for mark in item.iter_markers("xdist_group")]
        tiers = {mark.name for mark in item.iter_markers()} & {"pi", "postgres"}
        print("ITEM", item.nodeid, group, ",".join(sorted(tiers)) or "-", sep="\\t")
"""


def run_pytest(cwd: Path, *args: str, **environ: str) -> str:
    """Run pytest in a process of its own; its output."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env={**os.environ, **environ},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def collect(tmp_path: Path, *args: str) -> list[str]:
    (tmp_path / "show_items.py").write_text(SHOW_PLUGIN)
    shown = run_pytest(
        ROOT, "--collect-only", "-p", "show_items", *args, STORAGE, READER, PYTHONPATH=str(tmp_path)
    )
    lines = shown.splitlines()
    return [line.split("\t")[1:] for line in lines if line.startswith("ITEM\t")]


def fast_tier() -> str:
    match = re.search(r"^FAST_TIER := (.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert match is not None
    return match.group(1)


def test_tiers_follow_the_fixtures_and_the_fast_tier_leaves_them_out(tmp_path):
    items = {test: (group, tiers.split(",")) for test, group, tiers in collect(tmp_path)}
    postgres = {test for test, (_, tiers) in items.items() if "postgres" in tiers}
    pi = {test for test, (_, tiers) in items.items() if "pi" in tiers}
    storage = {test for test in items if test.startswith(STORAGE)}
    # Marked by the storage parameter, by the postgres_url fixture, never the SQLite cases.
    assert {test for test in storage if test.endswith("[postgres]")} < postgres
    assert {test for test in postgres if "[" not in test}
    assert not {test for test in postgres if test.endswith("[sqlite]")}
    # The reader's tests against the real Pi, and only those.
    assert pi
    assert pi < {test for test in items if test.startswith(READER)}
    # The fast tier is what is left.
    fast = {test for test, *_ in collect(tmp_path, "-m", fast_tier())}
    assert fast == set(items) - postgres - pi
    # One pytest-xdist group for every Postgres test (one server per run), else the module.
    for test, (group, _) in items.items():
        assert group == ("postgres" if test in postgres else test.split("::")[0]), test


GROUPED_SUITE = """
import os
from pathlib import Path

import pytest


@pytest.mark.xdist_group("shared")
@pytest.mark.parametrize("n", range(4))
def test_grouped(n):
    Path(os.environ["RECORD"], f"{__name__}-{n}").write_text(os.environ["PYTEST_XDIST_WORKER"])
"""


def test_pytest_xdist_keeps_a_group_on_one_worker(tmp_path):
    """The grouping above is worth nothing if pytest-xdist drops the groups (it does with
    pytest 9.2's structured ids): eight tests of one group, in two files, on two workers."""
    suite, record = tmp_path / "suite", tmp_path / "record"
    suite.mkdir()
    record.mkdir()
    for name in ("test_one.py", "test_two.py"):
        (suite / name).write_text(GROUPED_SUITE)
    run_pytest(suite, "-n", "2", "--dist", "loadgroup", "--rootdir", str(suite), RECORD=str(record))
    workers = {path.read_text() for path in record.iterdir()}
    assert len(list(record.iterdir())) == 8
    assert len(workers) == 1, workers
