"""Configuration values (keys and headers in ``auth.json`` and ``models.json``) mean what they
mean to Pi: the real pi-coding-agent resolves the same values and must agree."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.pi_oracle import require_node, require_pi_modules

from ctxmodes.providers import config_values

SCOPED = {"CTXT_A": "alpha", "CTXT_B": "beta", "CTXT_EMPTY": ""}
VALUES = [
    "sk-literal",
    "MY_API_KEY",
    "$CTXT_A",
    "${CTXT_A}",
    "${CTXT_A}_${CTXT_B}",
    "$CTXT_A_suffix",
    "${CTXT_A}_suffix",
    "prefix-$CTXT_B-end",
    "$$literal-dollar",
    "$!literal-bang",
    "$CTXT_MISSING",
    "a-$CTXT_EMPTY",
    "${not a name}",
    "${CTXT_A",
    "cost: $5",
    "$",
    "!echo from-a-command",
    "!exit 3",
    "!printf ''",
]

_PI_RESOLVE = """
const [module, input] = process.argv.slice(2);
const { resolveConfigValue, getConfigValueEnvVarNames } = await import(module);
const { values, scoped } = JSON.parse(input);
const resolve = (v) => resolveConfigValue(v, scoped) ?? null;
const out = values.map((v) => [resolve(v), getConfigValueEnvVarNames(v)]);
process.stdout.write(JSON.stringify(out));
"""


def test_values_resolve_as_pi_resolves_them(tmp_path: Path) -> None:
    node = require_node()
    modules = require_pi_modules()
    module = (
        modules / "@earendil-works/pi-coding-agent/dist/core/resolve-config-value.js"
    ).as_uri()
    script = tmp_path / "resolve.mjs"
    script.write_text(_PI_RESOLVE)
    pi = json.loads(
        subprocess.run(
            [node, str(script), module, json.dumps({"values": VALUES, "scoped": SCOPED})],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    )
    ours = [
        [config_values.resolve(v, SCOPED, environ={}), config_values.variable_names(v)]
        for v in VALUES
    ]
    assert ours == pi


def test_availability_never_runs_the_command(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    value = f"!touch {marker} && echo key"
    assert config_values.is_configured(value, environ={})
    assert not marker.exists()
    assert config_values.resolve(value, environ={}) == "key"
    assert marker.exists()


def test_an_unresolved_value_says_why_without_the_value() -> None:
    reason = config_values.unresolved_reason("sk-${CTXT_SECRET_PART}", environ={})
    assert reason == "CTXT_SECRET_PART is not set"
    assert "sk-" not in reason
