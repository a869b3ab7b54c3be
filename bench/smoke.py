"""``--smoke``: every benchmark runs in seconds at a toy size, so that the test suite runs them
all and an API change that breaks one fails the build. Smoke figures mean nothing."""

from __future__ import annotations

import argparse
from typing import Any

HELP = "run at a toy size in seconds (checks the benchmark still works; figures mean nothing)"


def parse_args(parser: argparse.ArgumentParser, **smoke_values: Any) -> argparse.Namespace:
    """``parser.parse_args()`` with a ``--smoke`` flag that sets ``smoke_values``."""
    parser.add_argument("--smoke", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.smoke:
        for name, value in smoke_values.items():
            setattr(args, name, value)
    return args
