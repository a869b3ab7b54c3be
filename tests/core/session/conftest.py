from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import (
    PiOracle,
    oracle_dir,
    our_view,
    require_node,
    require_oracle_cases,
    require_pi,
)

from ctxmodes.session.manager import SessionManager


def _case_names() -> list[Any]:
    found = oracle_dir()
    if found is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason="Pi oracle corpus not found"))]
    cases = found / "cases"
    return sorted(
        path.name.removesuffix(".expected.json")
        for path in cases.glob("*.expected.json")
        if (cases / path.name.replace(".expected.json", ".jsonl")).exists()
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # Tests taking ``case_name`` run once per oracle case that has a session file.
    if "case_name" in metafunc.fixturenames:
        metafunc.parametrize("case_name", _case_names())


@pytest.fixture(scope="session")
def oracle_cases() -> Path:
    return require_oracle_cases()


@pytest.fixture(scope="session")
def pi() -> PiOracle:
    return require_pi()


@pytest.fixture(scope="session")
def node() -> str:
    return require_node()


@pytest.fixture(scope="session")
def expected(oracle_cases: Path) -> Callable[[str, str], Any]:
    """``expected(name, kind)``: a case's ``<name>.<kind>.json`` (kind: expected, llm, …)."""

    def load(name: str, kind: str) -> Any:
        return json.loads((oracle_cases / f"{name}.{kind}.json").read_text())

    return load


@pytest.fixture(scope="session")
def session_snapshot() -> Callable[[SessionManager, list[str | None]], dict[str, Any]]:
    return our_view
