"""Where a Remote history or notes result keeps the backend's ciphertext in its details.

A module of its own, so that recognizing a Remote session (every command that infers a
session's mode) does not import the backend client.
"""

from __future__ import annotations

from typing import Final

#: The key, inside the result's details, of the backend's encrypted output.
ENCRYPTED_OUTPUT_KEY: Final = "encrypted_output"
