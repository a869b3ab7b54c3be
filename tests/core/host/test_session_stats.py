"""A session's statistics as Pi's ``getSessionStats`` counts them: every entry of the file
(other branches and compacted history included), summaries' usage too, and the context
usage unknown after a compaction until an answer reports again. (Compared with the real Pi
on the same session file in ``tests/core/rpc/test_work_commands.py``.)"""

from __future__ import annotations

from support.host_rig import EchoTool, ToolsPlugin, text_response, tool_response

from ctxmodes.compaction import CompactionSettings
from ctxmodes.host.options import HostOptions


def _usage_sum(rig, field: str) -> int:
    entries = rig.file_entries()
    usages = [e["message"].get("usage") for e in entries if e["type"] == "message"]
    usages += [e.get("usage") for e in entries if e["type"] == "compaction"]
    return sum(usage[field] for usage in usages if usage)


def test_counts_cover_every_branch_and_the_summaries(make_rig) -> None:
    rig = make_rig(
        [
            tool_response("echo", {"text": "x"}),
            text_response("first " * 40),
            text_response("second " * 40),
            text_response("after"),
        ],
        summaries=["the summary"],
        plugins=[ToolsPlugin(EchoTool())],
        options=HostOptions(compaction=CompactionSettings(keep_recent_tokens=10)),
    )
    rig.prompt("one " * 40)
    first_answer = rig.manager.get_leaf_id()
    rig.prompt("two " * 40)
    rig.manager.branch(first_answer)  # the second exchange is now on another branch
    rig.session.compact()
    stats = rig.session.session_stats()
    assert (stats.user_messages, stats.assistant_messages) == (2, 3)
    assert (stats.tool_calls, stats.tool_results, stats.total_messages) == (1, 1, 6)
    assert stats.tokens.input == _usage_sum(rig, "input") > 0
    assert stats.tokens.output == _usage_sum(rig, "output") > 0
    assert stats.tokens.total == sum(
        _usage_sum(rig, field) for field in ("input", "output", "cacheRead", "cacheWrite")
    )
    assert (stats.session_file, stats.session_id) == (
        str(rig.manager.session_file),
        rig.manager.session_id,
    )
    usage = stats.context_usage
    assert usage is not None
    assert (usage.tokens, usage.context_window, usage.percent) == (None, 128_000, None)

    rig.prompt("three")
    usage = rig.session.session_stats().context_usage
    assert usage is not None
    assert usage.tokens is not None
    assert usage.percent == usage.tokens / 128_000 * 100
