from __future__ import annotations

from ctxmodes.compaction import serialize_conversation
from ctxmodes.compaction.serialize import TOOL_RESULT_MAX_CHARS, truncate_for_summary
from ctxmodes.session.convert import convert_to_llm
from ctxmodes.session.models import message_from_json


def test_roles_are_labelled_and_joined_by_blank_lines(branch):
    branch.user("question")
    branch.assistant(
        {"type": "thinking", "thinking": "t1"},
        branch.text("a"),
        {"type": "thinking", "thinking": "t2"},
        branch.text("b"),
        branch.tool_call("read", path="x.py"),
        branch.tool_call("bash", command="ls", flags=["-l"]),
    )
    branch.tool_result("result")
    text = serialize_conversation([entry.message for entry in branch.entries])
    assert text == (
        "[User]: question\n\n"
        "[Assistant thinking]: t1\nt2\n\n"
        "[Assistant]: a\nb\n\n"
        '[Assistant tool calls]: read(path="x.py"); bash(command="ls", flags=["-l"])\n\n'
        "[Tool result]: result"
    )


def test_empty_texts_are_left_out(branch):
    branch.user("")
    branch.tool_result("")
    branch.assistant(branch.tool_call("noop"))
    assert serialize_conversation([e.message for e in branch.entries]) == (
        "[Assistant tool calls]: noop()"
    )


def test_integer_like_argument_keys_come_first_as_in_javascript(branch):
    branch.assistant(branch.tool_call("f", **{"b": 1, "10": 2, "2": 3}))
    assert serialize_conversation([branch.entries[0].message]) == (
        "[Assistant tool calls]: f(2=3, 10=2, b=1)"
    )


def test_long_tool_results_are_truncated_in_utf16_units(branch):
    # The emoji straddles the limit: JavaScript keeps its first half, and so do we.
    text = "a" * (TOOL_RESULT_MAX_CHARS - 1) + "😀" + "b" * 10
    truncated = truncate_for_summary(text)
    assert truncated == "a" * 1999 + "\ud83d" + "\n\n[... 11 more characters truncated]"
    branch.tool_result("x" * 2500)
    serialized = serialize_conversation([branch.entries[0].message])
    assert serialized.endswith("x\n\n[... 500 more characters truncated]")
    assert truncate_for_summary("short") == "short"


def test_session_roles_appear_as_the_user_messages_the_model_sees():
    messages = [
        {"role": "branchSummary", "summary": "went elsewhere", "fromId": "e0", "timestamp": 1},
        {"role": "compactionSummary", "summary": "earlier", "tokensBefore": 5, "timestamp": 2},
    ]
    text = serialize_conversation(convert_to_llm([message_from_json(m) for m in messages]))
    assert text.startswith("[User]: The following is a summary of a branch")
    assert "<summary>\nwent elsewhere</summary>" in text
    assert text.endswith("<summary>\nearlier\n</summary>")
