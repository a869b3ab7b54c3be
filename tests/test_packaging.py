"""The distribution as users get it: a wheel installed into a fresh virtual environment,
with a third-party mode distribution beside it."""

import os
import subprocess
import sys
import textwrap
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.packaging

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
BUILT_IN_MODES = sorted(PYPROJECT["project"]["entry-points"]["ctxmodes"])
IMPORT_NAMES = {
    Path(folder).name
    for folder in PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
}

#: The third-party mode of docs/writing-a-mode.md: a distribution of its own, built beside ours.
EXAMPLE_MODE = ROOT / "docs" / "example-mode"
THIRD_PARTY = "recent-turns"
THIRD_PARTY_DISTRIBUTION = "ctxmodes-recent-turns"


def build_wheel(source: Path, outdir: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(outdir)],
        cwd=source,
        check=True,
        capture_output=True,
    )
    (wheel,) = outdir.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    base = tmp_path_factory.mktemp("dist")
    ours = build_wheel(ROOT, base / "ours")
    theirs = build_wheel(EXAMPLE_MODE, base / "theirs")
    env_dir = base / "venv"
    # A bare environment, filled by this interpreter's pip (``--python``): no pip of its own
    # to bootstrap, and no bytecode compiled ahead of the imports that need it.
    venv.create(env_dir, with_pip=False)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(env_dir / "bin" / "python"),
            "install",
            "--quiet",
            "--no-compile",
            str(ours),
            str(theirs),
        ],
        check=True,
        capture_output=True,
    )
    return ours, env_dir


def run(env_dir, *args, cwd=None, env=None):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CTXMODES_")}
    environ["CTXMODES_CONFIG_DIR"] = str(env_dir / "no-user-config")
    environ.update(env or {})
    return subprocess.run(
        [env_dir / "bin" / "ctxmodes", *args],
        cwd=cwd or env_dir,
        env=environ,
        capture_output=True,
        text=True,
    )


def test_wheel_installs_only_namespaced_packages(installed):
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        top = {name.split("/")[0] for name in archive.namelist()}
    packages = {name for name in top if not name.endswith(".dist-info")}
    assert packages == IMPORT_NAMES
    assert all(name == "ctxmodes" or name.startswith("ctxmodes_") for name in packages)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "ctxmodes/hookspecs.py" in names
    assert "ctxmodes/py.typed" in names


def test_fresh_environment_imports_and_lists_entry_points(installed):
    _, env_dir = installed
    script = textwrap.dedent(
        """
        import importlib.metadata as md, importlib.util as u
        import ctxmodes, ctxmodes_off
        assert u.find_spec("core") is None and u.find_spec("plugins") is None
        print(sorted(ep.name for ep in md.entry_points(group="ctxmodes")))
        print([ep.value for ep in md.entry_points(group="pytest11") if ep.name == "ctxmodes"])
        """
    )
    out = subprocess.run(
        [env_dir / "bin" / "python", "-c", script],
        cwd=env_dir,  # away from the checkout, whose core/ and plugins/ are on '' otherwise
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.splitlines() == [
        str(sorted([THIRD_PARTY, *BUILT_IN_MODES])),
        "['ctxmodes.testing.plugin']",
    ]


def test_the_installed_prompt_points_at_the_installed_documentation(installed):
    """The system prompt names the README and pages the wheel put in the package, which
    hold what the checkout's do, and nothing of the checkout."""
    _, env_dir = installed
    script = textwrap.dedent(
        """
        from pathlib import Path
        from ctxmodes.host.system_prompt import build_system_prompt
        from ctxmodes.own_documentation import own_documentation
        from ctxmodes.tools.files import ReadTool
        found = own_documentation()
        print(found.readme)
        print(found.pages)
        print(build_system_prompt([ReadTool()], Path.cwd()))
        """
    )
    out = subprocess.run(
        [env_dir / "bin" / "python", "-c", script],
        cwd=env_dir,
        capture_output=True,
        text=True,
        check=True,
    )
    readme, pages, *prompt = out.stdout.splitlines()
    assert Path(readme).read_bytes() == (ROOT / "README.md").read_bytes()
    for page in ("getting-started.md", "modes/tree.md", "terminal.md", "writing-a-mode.md"):
        assert (Path(pages) / page).read_bytes() == (ROOT / "docs" / page).read_bytes()
    assert str(env_dir) in readme
    assert str(ROOT) not in readme
    assert f"- Overview: {readme}" in prompt
    assert any(line.startswith(f"- Pages: {pages} (") for line in prompt)


def test_third_party_mode_is_listed_with_its_distribution(installed):
    _, env_dir = installed
    result = run(env_dir, "modes")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[1:]}
    assert rows[THIRD_PARTY][1:3] == ["installed", THIRD_PARTY_DISTRIBUTION]
    assert rows["off"][1:3] == ["active", "ctxmodes"]


def test_third_party_mode_is_selectable_by_flag_env_and_config(installed, tmp_path):
    _, env_dir = installed

    def active(result):
        assert result.returncode == 0, result.stderr
        return [line.split()[0] for line in result.stdout.splitlines() if " active " in line]

    assert active(run(env_dir, "modes", "--mode", THIRD_PARTY)) == [THIRD_PARTY]
    assert active(run(env_dir, "modes", env={"CTXMODES_MODE": THIRD_PARTY})) == [THIRD_PARTY]
    (tmp_path / ".ctxmodes.toml").write_text(f'mode = "{THIRD_PARTY}"\n')
    assert active(run(env_dir, "modes", "--approve", cwd=tmp_path)) == [THIRD_PARTY]


def test_blocked_third_party_mode_is_said_to_be_blocked(installed):
    _, env_dir = installed
    blocked = {"CTXMODES_BLOCK_PLUGINS": THIRD_PARTY}
    listing = run(env_dir, "modes", env=blocked)
    assert listing.returncode == 0
    rows = {line.split()[0]: line.split()[1:3] for line in listing.stdout.splitlines()[1:]}
    assert rows[THIRD_PARTY] == ["blocked", THIRD_PARTY_DISTRIBUTION]
    selected = run(env_dir, "modes", "--mode", THIRD_PARTY, env=blocked)
    assert selected.returncode == 1
    assert selected.stdout == ""
    assert selected.stderr.strip().splitlines()[-1] == (
        f"ctxmodes: error: command line: mode: no loaded plugin provides mode '{THIRD_PARTY}'; "
        f"plugin '{THIRD_PARTY}' is blocked: remove it from plugins.block and "
        "CTXMODES_BLOCK_PLUGINS to load it"
    )


def test_third_party_settings_are_validated_and_shown(installed, tmp_path):
    _, env_dir = installed
    config = tmp_path / ".ctxmodes.toml"
    config.write_text(f"[modes.{THIRD_PARTY}]\nturns = 5\n")
    shown = run(env_dir, "config", "show", "--approve", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"modes.{THIRD_PARTY}.turns" in shown.stdout
    assert str(config) in shown.stdout
    config.write_text(f"[modes.{THIRD_PARTY}]\nturn = 5\n")
    refused = run(env_dir, "config", "show", "--approve", cwd=tmp_path)
    assert refused.returncode == 1
    assert f"[modes.{THIRD_PARTY}]: unknown setting 'turn'" in refused.stderr
