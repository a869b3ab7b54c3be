"""The service package's docstring is its map: it names every module, and the ones it says
need the ``serve`` or ``postgres`` extra are exactly those that cannot load without them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import ctxmodes_remote.service as service

PACKAGE = Path(service.__file__).parent
MODULES = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__"}
#: The top-level imports the two extras bring (pyproject.toml).
EXTRAS = ("aiohttp", "prometheus_client", "uvloop", "backports", "psycopg", "psycopg_pool")

#: Imports each module with the extras' packages made unimportable; prints those that need them.
PROBE = """
import importlib
import sys

class WithoutExtras:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in EXTRAS:
            raise ModuleNotFoundError(name, name=name)

EXTRAS, MODULES = sys.argv[1].split(","), sys.argv[2].split(",")
sys.meta_path.insert(0, WithoutExtras())
for module in MODULES:
    try:
        importlib.import_module(f"ctxmodes_remote.service.{module}")
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in EXTRAS:
            raise
        print(module)
"""


def docstring() -> str:
    assert service.__doc__ is not None
    return service.__doc__


def test_the_docstring_names_every_module_of_the_package():
    named = set(re.findall(r":mod:`\.(\w+)`", docstring()))
    assert named == MODULES


def test_only_the_modules_it_names_need_the_extras():
    sentence = re.search(
        r"The ``serve`` and ``postgres`` extras are imported.*?;", docstring(), re.S
    )
    assert sentence is not None
    said = set(re.findall(r":mod:`\.(\w+)`", sentence.group(0)))
    probe = [sys.executable, "-c", PROBE, ",".join(EXTRAS), ",".join(sorted(MODULES))]
    done = subprocess.run(probe, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    needing = set(done.stdout.split())
    assert needing == said
