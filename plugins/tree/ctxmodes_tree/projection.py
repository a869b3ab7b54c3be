"""What the model sees in Tree mode.

Once the active branch owns a verified archive, the tree itself has done the cut: the
archived windows are side branches, and what remains on the active path before the current
boundary is the chain ``summary → manifest → snapshot`` of each rollover. Pi turns those
summaries into ``branchSummary`` messages; Tree removes exactly the ones its archives own
(:mod:`ctxmodes_tree.signatures`) and keeps everything else, including manual summaries and
other plugins' summaries. Manifests and snapshots are custom entries, which never become
messages.

Before the first archive (a fresh session, or a branch whose manifests were all rejected),
the branch still holds everything, so the latest-boundary projection applies first, as in
Local, and the owned-summary filter after it. The same holds after a compaction (a manual
``/compact`` in Tree): Pi's summary and the tail it kept stay on the path before the fresh
window, where no tree cut removes them, and the model receives no conversation summary.
Pi puts the compaction summary first, so that check costs O(1).

Cost: one pass over the projected messages. The archive index follows the session's leaf
by itself (an O(1) check per query), so the branch is never listed here.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxmodes import ContextProjection
from ctxmodes.session import AgentMessage, BranchSummaryMessage, CompactionSummaryMessage
from ctxmodes.windows import project_latest_window
from ctxmodes_tree.archive_index import TreeArchiveIndex
from ctxmodes_tree.signatures import message_signature


def project_tree_context(
    projection: ContextProjection, archives: TreeArchiveIndex
) -> list[AgentMessage]:
    """The messages to send for ``projection`` (the projection itself is not changed)."""
    messages: Sequence[AgentMessage] = projection.messages
    compacted = bool(messages) and isinstance(messages[0], CompactionSummaryMessage)
    if compacted or not archives.has_archives() or archives.has_rejections():
        messages = project_latest_window(messages)
    return [message for message in messages if not _owned_summary(message, archives)]


def _owned_summary(message: AgentMessage, archives: TreeArchiveIndex) -> bool:
    return isinstance(message, BranchSummaryMessage) and archives.hides(message_signature(message))
