"""What every test shares: the developer's environment never reaches the tests.

A developer's shell may select plugins (``CTXMODES_BLOCK_PLUGINS``), a mode or a model, point
at a configuration directory, at Pi's or the Codex CLI's directory (with real sessions and
credentials in them) or at another OpenAI endpoint, and the home folder may hold skills, prompt
templates and trust decisions (``~/.agents``, ``~/.pi``). None of it may change what a test
sees, nor may a test write there: for the whole run those variables are removed, and the home,
configuration, Pi and Codex directories are empty ones of the run. Subprocesses inherit the same
environment. A test that needs one of them sets it itself.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

#: Read by ctxmodes or by the tools it speaks for, or set by an agent the tests may run
#: under (its process markers and its session's variables); removed for the run.
REMOVED = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "PI_OAUTH_CALLBACK_HOST",
    "PI_EXPERIMENTAL",
    "AI_AGENT",
    "PI_CODING_AGENT",
    "PI_SESSION_ID",
    "PI_SESSION_FILE",
    "PI_PROVIDER",
    "PI_MODEL",
    "PI_REASONING_LEVEL",
    "PI_TUI_ESC_TIMEOUT",
)
#: Directories that would be the user's own; empty ones of the run instead.
DIRECTORIES = {
    "HOME": "home",
    "CTXMODES_CONFIG_DIR": "config",
    "PI_CODING_AGENT_DIR": "pi",
    "CODEX_HOME": "codex",
}


def pytest_configure(config: pytest.Config) -> None:
    saved = dict(os.environ)
    root = Path(tempfile.mkdtemp(prefix="ctxmodes-tests-env-"))
    from ctxmodes.providers.auth import credential_variables

    # Any provider's key or cloud credentials of the shell would make models available.
    removed = [*REMOVED, *credential_variables()]
    for name in [name for name in os.environ if name.startswith("CTXMODES_")] + removed:
        os.environ.pop(name, None)
    # Caches change no behaviour, and pip's lets the packaging tests install offline.
    os.environ.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))
    for name, folder in DIRECTORIES.items():
        (root / folder).mkdir()
        os.environ[name] = str(root / folder)
    # A relative PYTHONPATH (`PYTHONPATH=core:plugins/...` to test a checkout) would name
    # other folders, or none, in a subprocess started elsewhere (most start in a test's
    # tmp_path), which would then run another installed copy of ctxmodes.
    if os.environ.get("PYTHONPATH"):
        entries = os.environ["PYTHONPATH"].split(os.pathsep)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            str(Path(entry).resolve()) if entry else entry for entry in entries
        )

    def restore() -> None:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(root, ignore_errors=True)

    config.add_cleanup(restore)


@pytest.fixture(autouse=True)
def _no_settings_saved_for_other_tests() -> Iterator[None]:
    """The run's own Pi agent directory keeps no ``settings.json``: a test that saves Pi's
    settings (``/settings``, Ctrl+T, RPC's ``set_*``) gives itself a directory of its own
    (the ``agent_dir`` fixture), so no later test starts from its choices."""
    shared = Path(os.environ["PI_CODING_AGENT_DIR"]) / "settings.json"
    yield
    if shared.exists():
        shared.unlink()
        pytest.fail("the test saved Pi's settings in the run's agent directory: use agent_dir")


#: Fixtures that start a real component: a test using one, directly or through another
#: fixture, belongs to that component's tier.
TIER_FIXTURES = {
    "postgres_server": "postgres",
    "pi": "pi",
    "pi_node_modules": "pi",
    "pi_node": "pi",
    "node": "pi",
}


def _tiers(item: pytest.Item) -> set[str]:
    tiers = {TIER_FIXTURES[name] for name in item.fixturenames if name in TIER_FIXTURES}
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "postgres" in callspec.id.split("-"):
        tiers.add("postgres")  # storage parametrized over sqlite and postgres
    return tiers


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with the tiers of the real components it starts, and keep together on
    one pytest-xdist worker what shares an expensive fixture: every Postgres test (one server
    per run) and otherwise each module (module-scoped wheels, browsers, session corpora)."""
    for item in items:
        for tier in _tiers(item):
            item.add_marker(tier)
        group = "postgres" if item.get_closest_marker("postgres") else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))
