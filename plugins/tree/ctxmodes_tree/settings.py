"""Tree's ``[modes.tree]`` settings: the bounds on what one archived window may cost.

```toml
[modes.tree]
archive_max_items = 2000
```
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ctxmodes_tree.limits import DEFAULT_LIMITS, ArchiveLimits


class TreeSettings(BaseModel):
    """Validated from the configuration when a session activates Tree."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Entries from an archived leaf back to its branch base; a longer archived path is
    #: not verified (that archive is unavailable to ``history``), and a rollover whose
    #: archive would be longer is refused before anything is written.
    archive_max_depth: int = Field(default=DEFAULT_LIMITS.max_depth, ge=1)
    #: Archived entries kept as history items per archive (the newest ones).
    archive_max_items: int = Field(default=DEFAULT_LIMITS.max_items, ge=1)
    #: Bytes of the session file read for the archived lines of one archive (the newest).
    archive_max_bytes: int = Field(default=DEFAULT_LIMITS.max_bytes, ge=1)

    def limits(self) -> ArchiveLimits:
        return ArchiveLimits(
            max_depth=self.archive_max_depth,
            max_items=self.archive_max_items,
            max_bytes=self.archive_max_bytes,
        )
