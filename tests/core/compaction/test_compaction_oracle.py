"""Token estimates, cut points and compaction preparation against Pi's recorded answers.

For every case, ``<case>.compaction.json`` holds what Pi's pure functions returned on the
path to the file's last entry; each value is compared with ours.
"""

from __future__ import annotations

from typing import Any

from ctxmodes.compaction import (
    CompactionSettings,
    estimate_context_tokens,
    estimate_tokens,
    find_compaction_boundary,
    find_cut_point,
    prepare_compaction,
)
from ctxmodes.session.models import to_json


def test_context_token_estimates(corpus, compaction_case):
    expected = corpus.load(compaction_case, ".compaction.json")
    with corpus.open(compaction_case) as manager:
        assert len(manager.get_branch()) == expected["pathLength"]
        context = manager.build_session_context()
        messages = context.messages
        ours = estimate_context_tokens(messages).model_dump(by_alias=True)
        assert ours == expected["estimateContextTokens"]
        assert [estimate_tokens(m) for m in messages] == expected["perMessageEstimateTokens"]
        # The stored JSON form gives the same answer without building models.
        from_json = estimate_context_tokens(context.message_json).model_dump(by_alias=True)
        assert from_json == expected["estimateContextTokens"]


def _id_at(path: Any, index: int) -> str | None:
    return path[index].id if 0 <= index < len(path) else None


def _pi_id(random_ids: bool, path: Any, pi_id: str | None, pi_index: int) -> str | None:
    # Where Pi made up random ids while opening, compare positions instead of ids.
    return _id_at(path, pi_index) if random_ids and pi_id is not None else pi_id


def test_prepare_compaction(corpus, compaction_case):
    recorded = corpus.load(compaction_case, ".compaction.json")["prepareCompaction"]
    random_ids = corpus.ids_are_random(compaction_case)
    with corpus.open(compaction_case) as manager:
        path = manager.get_branch()
        for keep, expected in recorded.items():
            settings = CompactionSettings(keep_recent_tokens=int(keep))
            ours = prepare_compaction(path, settings)
            if expected is None:
                assert ours is None, keep
                continue
            assert ours is not None, keep
            cut = expected["cutPoint"]
            assert ours.first_kept_entry_id == _pi_id(
                random_ids, path, expected["firstKeptEntryId"], cut["firstKeptEntryIndex"]
            )
            assert ours.is_split_turn == expected["isSplitTurn"]
            assert ours.tokens_before == expected["tokensBefore"]
            assert ours.previous_summary == expected.get("previousSummary")
            assert ours.settings is settings
            file_ops = {key: list(value) for key, value in ours.file_ops.model_dump().items()}
            assert file_ops == expected["fileOps"]
            assert len(ours.messages_to_summarize) == expected["messagesToSummarizeCount"]
            assert len(ours.turn_prefix_messages) == expected["turnPrefixMessagesCount"]
            if "messagesToSummarize" in expected:
                summarized = [to_json(m) for m in ours.messages_to_summarize]
                assert summarized == expected["messagesToSummarize"]
                prefix = [to_json(m) for m in ours.turn_prefix_messages]
                assert prefix == expected["turnPrefixMessages"]


def test_find_cut_point(corpus, compaction_case):
    recorded = corpus.load(compaction_case, ".compaction.json")["prepareCompaction"]
    random_ids = corpus.ids_are_random(compaction_case)
    with corpus.open(compaction_case) as manager:
        path = manager.get_branch()
        boundary = find_compaction_boundary(path)
        for keep, expected in recorded.items():
            if expected is None:
                continue
            cut = expected["cutPoint"]
            ours = find_cut_point(path, boundary.start_index, len(path), int(keep))
            assert ours.model_dump(by_alias=True) == {
                key: cut[key] for key in ("firstKeptEntryIndex", "turnStartIndex", "isSplitTurn")
            }
            assert _id_at(path, ours.first_kept_entry_index) == _pi_id(
                random_ids, path, cut["firstKeptEntryId"], cut["firstKeptEntryIndex"]
            )
            assert _id_at(path, ours.turn_start_index) == _pi_id(
                random_ids, path, cut["turnStartEntryId"], cut["turnStartIndex"]
            )
