"""The archive manifest: the model-invisible entry that claims one Pi branch summary for Tree.

Pi's ``branch_summary`` entries cannot carry our metadata (the summarizer writes them and
entries are immutable), so right after a rollover navigation Tree appends a ``custom`` entry
as the summary's direct child::

    {"customType": "codex-context-tree-archive",
     "data": {"protocol": 1, "strategy": "codex-context-tree", "windowId",
              "boundaryEntryId", "summaryEntryId", "archivedLeafId", "branchBaseId"}}

``summaryEntryId``, ``archivedLeafId`` and ``branchBaseId`` repeat the summary's ``id``,
``fromId`` and ``parentId`` (``null`` when the summary is a root). The shape is shared byte
for byte with sessions the TypeScript extension writes; keys are written in this order.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from ctxmodes.session import BranchSummaryEntry

TREE_ARCHIVE_CUSTOM_TYPE = "codex-context-tree-archive"
TREE_ARCHIVE_STRATEGY: Final = "codex-context-tree"
TREE_ARCHIVE_PROTOCOL: Final = 1

_Id = Annotated[str, Field(min_length=1)]


def _not_a_boolean(value: object) -> object:
    # A boolean is an int to Python (True == 1), never a number to JSON or to the
    # extension's protocol === 1.
    if isinstance(value, bool):
        raise ValueError("the protocol is a number, not a boolean")
    return value


_Protocol = Annotated[Literal[1], BeforeValidator(_not_a_boolean)]


class TreeArchiveManifest(BaseModel):
    """``data`` of a ``codex-context-tree-archive`` entry.

    Strict: a number where an id belongs, an empty id or an unknown protocol or strategy
    makes the manifest invalid. Unknown extra keys (later protocol additions) are ignored.
    """

    model_config = ConfigDict(strict=True, frozen=True, populate_by_name=True, extra="ignore")

    protocol: _Protocol = TREE_ARCHIVE_PROTOCOL
    strategy: Literal["codex-context-tree"] = TREE_ARCHIVE_STRATEGY
    window_id: _Id = Field(alias="windowId")
    boundary_entry_id: _Id = Field(alias="boundaryEntryId")
    summary_entry_id: _Id = Field(alias="summaryEntryId")
    archived_leaf_id: _Id = Field(alias="archivedLeafId")
    #: Required but nullable: a summary that became a new root has no branch base.
    branch_base_id: _Id | None = Field(alias="branchBaseId")

    def dump(self) -> dict[str, Any]:
        """The persisted form, keys in wire order, ``branchBaseId`` kept even when null."""
        return self.model_dump(mode="json", by_alias=True)

    def agrees_with(self, summary: BranchSummaryEntry) -> bool:
        """Whether this manifest describes ``summary`` (id, ``fromId`` and ``parentId``)."""
        return (
            summary.id == self.summary_entry_id
            and summary.from_id == self.archived_leaf_id
            and summary.parent_id == self.branch_base_id
        )


def parse_manifest(data: object) -> TreeArchiveManifest | None:
    """The manifest in ``data``, or ``None`` when it does not have the manifest shape."""
    # protocol and strategy have one legal value each, but a manifest must still state them.
    if not isinstance(data, dict) or "protocol" not in data or "strategy" not in data:
        return None
    try:
        return TreeArchiveManifest.model_validate(data)
    except ValidationError:
        return None


def manifest_for_summary(
    window_id: str, boundary_entry_id: str, summary: BranchSummaryEntry
) -> TreeArchiveManifest:
    """The manifest that records ``summary`` as the archive of window ``window_id``."""
    return TreeArchiveManifest(
        window_id=window_id,
        boundary_entry_id=boundary_entry_id,
        summary_entry_id=summary.id,
        archived_leaf_id=summary.from_id,
        branch_base_id=summary.parent_id,
    )
