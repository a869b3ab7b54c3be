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

    #: Entries walked from an archived leaf back to its branch base; a longer archived
    #: path cannot be verified, so that archive is unavailable to ``history``.
    archive_max_depth: int = Field(default=DEFAULT_LIMITS.max_depth, ge=1)
    #: Archived entries kept as history items per archive (the newest ones).
    archive_max_items: int = Field(default=DEFAULT_LIMITS.max_items, ge=1)
    #: Characters of raw archived content kept per archive (the newest ones).
    archive_max_chars: int = Field(default=DEFAULT_LIMITS.max_chars, ge=1)

    def limits(self) -> ArchiveLimits:
        return ArchiveLimits(
            max_depth=self.archive_max_depth,
            max_items=self.archive_max_items,
            max_chars=self.archive_max_chars,
        )
