"""The rule for the names plugins give what they register (modes, command-line commands).

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import re

#: Lower case, digits, ``-`` or ``_``; starting with a letter; at most 40 characters.
PLUGIN_THING_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
