"""Pi's ``--list-models [SEARCH]``: ``ctxmodes --list-models`` prints what the real Pi 0.85
prints, byte for byte, for the same providers (Pi reading them all from ``models.json``,
ctxmodes from ``models.json`` and its own ``[providers.<name>]`` tables), for the built-in
catalog of providers with a key, and when no provider has credentials; ``ctxmodes models
--search`` filters ctxmodes' own table the same way."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from support.cli_process import run_ctxmodes
from support.pi_print import pi_cli

from ctxmodes.cli.pi_model_list import NO_MODELS_AVAILABLE, format_token_count

API = "openai-completions"
BASE_URL = "http://127.0.0.1:9/v1"  # never called: listing sends nothing
KEY_VARIABLE = "LIST_MODELS_TEST_KEY"
UNSET_VARIABLE = "LIST_MODELS_UNSET_KEY"


def _model(
    model_id: str,
    context: int | None = None,
    max_out: int | None = None,
    *,
    thinking: bool = False,
    images: bool = False,
) -> dict[str, Any]:
    """A model as ``models.json`` spells it; unset limits are left to the defaults."""
    model: dict[str, Any] = {"id": model_id, "reasoning": thinking}
    model["input"] = ["text", "image"] if images else ["text"]
    if context is not None:
        model["contextWindow"] = context
    if max_out is not None:
        model["maxTokens"] = max_out
    return model


#: Provider → (its key as ``models.json`` spells it, its models). Ids and providers differ
#: in case, digits and punctuation, so that only ``localeCompare``'s order sorts them right;
#: limits fall on Pi's rounding (1750 is 1.8K, 1048576 is 1.0M, 999999 is 1000.0K).
PROVIDERS: dict[str, tuple[str | None, list[dict[str, Any]]]] = {
    "zeta-lab": (
        "sk-zeta",
        [
            _model("Sonnet-4", 200000, 64000, thinking=True, images=True),
            _model("sonnet-10", 1048576, 1250),
            _model("sonnet_2", 1500, 999),
            _model("gpt-4o", 128000, 16384, images=True),
            _model("GPT-4o-mini", 1000000, 1750, thinking=True),
        ],
    ),
    "Alpha": (
        "sk-alpha",
        [
            _model("a2", 999, 100),
            _model("A10", 1250, 128000, thinking=True),
            _model("a-1", 2500000, 1000),
            _model("a.1", 1000, 1024, images=True),
        ],
    ),
    "alpha_2": (
        f"${KEY_VARIABLE}",
        [
            _model("model:latest", 32768),
            _model("model.v2", 262144, 131072, images=True),
            _model("Model-v2", 999999, 2250),
        ],
    ),
    "beta": (
        f"${KEY_VARIABLE}",
        [
            _model("éclair-1", 8192),
            _model("eclair-2", 1000000, 32000, thinking=True),
            _model("Eclair-3"),
            _model("gpt-4o", 128000),
        ],
    ),
    # No key, or one naming a variable that is not set: listed by neither.
    "nokey": (None, [_model("hidden-1")]),
    "unset": (f"${UNSET_VARIABLE}", [_model("hidden-2")]),
    "gamma": (None, [_model("hidden-3")]),
}
#: The providers ctxmodes reads from its own configuration rather than ``models.json``.
CONFIGURED_IN_CTXMODES = ("Alpha", "beta", "gamma")

SEARCHES = [
    ["--list-models"],
    ["--list-models", "SONNET"],
    ["--list-models", "zeta 4o"],
    ["--list-models", "alpha/a1"],
    ["--list-models", "4gpt"],
    ["--list-models", "no-such-model"],
    # Where the search ends, as Pi's arguments say.
    ["hi", "--list-models", "model"],
    ["--list-models", "@notes.txt"],
    ["--list-models", "sonnet", "--list-models"],
    ["--list-models", "run"],
]


def _provider_json(key: str | None, models: list[dict[str, Any]]) -> dict[str, Any]:
    provider: dict[str, Any] = {"baseUrl": BASE_URL, "api": API, "models": models}
    if key is not None:
        provider["apiKey"] = key
    return provider


def _models_json(directory: Path, names: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    providers = {name: _provider_json(*PROVIDERS[name]) for name in names}
    (directory / "models.json").write_text(json.dumps({"providers": providers}))


def _config_toml(directory: Path, names: tuple[str, ...]) -> None:
    """``[providers.<name>]`` tables for ``names`` (a ``$VAR`` key as ``api_key_env``)."""
    tables = []
    for name in names:
        key, models = PROVIDERS[name]
        lines = [f"[providers.{json.dumps(name)}]", f'api = "{API}"', f'base_url = "{BASE_URL}"']
        if key is not None and key.startswith("$"):
            lines.append(f"api_key_env = {json.dumps(key[1:])}")
        elif key is not None:
            lines.append(f"api_key = {json.dumps(key)}")
        entries = []
        for model in models:
            fields = {
                "id": model["id"],
                "reasoning": model["reasoning"],
                "input": model["input"],
                "context_window": model.get("contextWindow"),
                "max_tokens": model.get("maxTokens"),
            }
            # JSON's strings, booleans and lists are TOML's.
            set_fields = [f"{k} = {json.dumps(v)}" for k, v in fields.items() if v is not None]
            entries.append("{ " + ", ".join(set_fields) + " }")
        lines.append("models = [" + ", ".join(entries) + "]")
        tables.append("\n".join(lines))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.toml").write_text("\n\n".join(tables) + "\n")


def _pi(tmp_path: Path, agent: Path, argv: list[str], env: dict[str, str]) -> Any:
    """The real Pi's ``argv``, in ``tmp_path``, with ``agent`` as its agent directory."""
    # localeCompare follows the locale: Pi's order is ICU's root order in C and English.
    return pi_cli(tmp_path, agent, argv, env={**env, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"})


def _both(
    tmp_path: Path, runs: list[list[str]], env: dict[str, str], pi_agent: Path
) -> list[tuple[Any, Any]]:
    """Each of ``runs`` by Pi (an agent directory of its own per run: Pi writes to it) and
    by ctxmodes (``tmp_path/agent`` and ``tmp_path/config``), side by side."""

    def by_pi(index: int) -> Any:
        agent = tmp_path / f"pi-agent-{index}"
        agent.mkdir()
        models = pi_agent / "models.json"
        if models.exists():
            (agent / "models.json").write_bytes(models.read_bytes())
        return _pi(tmp_path, agent, runs[index], env)

    with ThreadPoolExecutor(max_workers=4) as pool:
        pis = [pool.submit(by_pi, index) for index in range(len(runs))]
        ours = [pool.submit(run_ctxmodes, tmp_path, *argv, env=env) for argv in runs]
        return [(pi.result(), our.result()) for pi, our in zip(pis, ours, strict=True)]


@pytest.mark.pi
def test_list_models_prints_what_pi_prints_for_the_same_providers(tmp_path: Path) -> None:
    everything = list(PROVIDERS)
    _models_json(tmp_path / "pi-models", everything)
    _models_json(tmp_path / "agent", [n for n in everything if n not in CONFIGURED_IN_CTXMODES])
    _config_toml(tmp_path / "config", CONFIGURED_IN_CTXMODES)
    env = {KEY_VARIABLE: "sk-from-the-environment"}
    results = _both(tmp_path, SEARCHES, env, tmp_path / "pi-models")
    for argv, (pi, ours) in zip(SEARCHES, results, strict=True):
        assert (pi.returncode, pi.stderr) == (0, ""), (argv, pi.stderr)
        assert (ours.returncode, ours.stderr) == (0, ""), (argv, ours.stderr)
        assert ours.stdout == pi.stdout, argv
    whole, sonnet = results[0][0].stdout, results[1][0].stdout
    # What the comparison covers: all four providers with a key, sorted and rounded as Pi
    # does, a search that narrows, none of the providers without a key.
    assert whole.splitlines()[:3] == [
        "provider  model         context  max-out  thinking  images",
        "Alpha     a-1           2.5M     1K       no        no    ",
        "Alpha     a.1           1K       1.0K     no        yes   ",
    ]
    assert len(whole.splitlines()) == 1 + 16
    assert "hidden" not in whole
    assert "1000.0K  2.3K" in whole
    assert len(sonnet.splitlines()) == 1 + 3
    assert results[5][0].stdout == 'No models matching "no-such-model"\n'


@pytest.mark.pi
def test_the_builtin_catalog_of_a_provider_with_a_key_is_listed_as_pi_lists_it(
    tmp_path: Path,
) -> None:
    env = {"GROQ_API_KEY": "gsk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}
    runs = [["--list-models"], ["--list-models", "sonnet 4"], ["--list-models", "groq/70b"]]
    results = _both(tmp_path, runs, env, tmp_path / "pi-models")
    for argv, (pi, ours) in zip(runs, results, strict=True):
        assert (pi.returncode, ours.returncode) == (0, 0), (argv, pi.stderr, ours.stderr)
        assert ours.stdout == pi.stdout, argv
    providers = {line.split()[0] for line in results[0][1].stdout.splitlines()[1:]}
    assert providers == {"anthropic", "groq"}


@pytest.mark.pi
def test_without_credentials_pi_s_message_says_there_are_no_models(tmp_path: Path) -> None:
    _models_json(tmp_path / "pi-models", ["nokey"])
    _models_json(tmp_path / "agent", ["nokey"])
    runs = [["--list-models"], ["--list-models", "hidden"]]
    for pi, ours in _both(tmp_path, runs, {}, tmp_path / "pi-models"):
        assert (pi.returncode, ours.returncode) == (0, 0)
        # Pi goes on with the paths of its own documentation; ctxmodes with its own ways.
        assert pi.stdout.startswith("No models available. Use /login to log into a provider")
        assert ours.stdout == NO_MODELS_AVAILABLE + "\n"
        assert ours.stderr == ""


@pytest.mark.parametrize(
    ("count", "written"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1K"),
        (1024, "1.0K"),
        (1050, "1.1K"),
        # Exact halves round up, as JavaScript's toFixed rounds them.
        (1250, "1.3K"),
        (2250, "2.3K"),
        (131072, "131.1K"),
        (999999, "1000.0K"),
        (1000000, "1M"),
        (1048576, "1.0M"),
        (2250000, "2.3M"),
        (12345678, "12.3M"),
    ],
)
def test_token_counts_are_written_as_pi_writes_them(count: int, written: str) -> None:
    assert format_token_count(count) == written


@pytest.mark.slow  # runs ctxmodes in processes of its own
def test_models_search_keeps_the_best_matches_first_in_ctxmodes_table(tmp_path: Path) -> None:
    _models_json(tmp_path / "agent", ["zeta-lab", "nokey"])
    listed = run_ctxmodes(tmp_path, "models", "--provider", "zeta-lab", "--search", "t4")
    assert listed.returncode == 0, listed.stderr
    refs = [line.split()[0] for line in listed.stdout.splitlines()[1:]]
    # The `t` of `zeta` matches first in each: the `4` closest to it wins, and equal scores
    # keep the catalog's order (where Sonnet-4 comes first).
    assert refs == ["zeta-lab/gpt-4o", "zeta-lab/GPT-4o-mini", "zeta-lab/Sonnet-4"]
    nothing = run_ctxmodes(tmp_path, "models", "--search", "no-such-model")
    assert (nothing.returncode, nothing.stdout) == (0, 'No models matching "no-such-model"\n')


@pytest.mark.slow  # runs ctxmodes in processes of its own
def test_an_option_after_list_models_is_not_its_search(tmp_path: Path) -> None:
    _models_json(tmp_path / "agent", ["zeta-lab"])
    listed = run_ctxmodes(tmp_path, "--list-models", "--no-approve")
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == 1 + 5
