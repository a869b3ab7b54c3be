"""Pi's commands reading the session file's tree: ``get_entries`` and ``get_tree``.

Entries go out as the session file stores them (Pi's ``getEntries`` holds the parsed lines),
every branch included, with the id of the current leaf (``null`` in an empty session). A
tree node is ``{entry, children, label?, labelTimestamp?}``, as Pi's ``getTree`` builds
it: roots in file order, children oldest first.

A tree nests two JSON levels an entry, deeper than any encoder's recursion goes for a long
session, so it is written a node at a time (:func:`tree_json`) and handed to the response
as JSON text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import orjson

from ctxmodes.rpc.protocol import JsonObject, RpcCommand, RpcCommandError, RpcContext
from ctxmodes.session import codec
from ctxmodes.session.tree import SessionTreeNode


def get_entries(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Every entry in append order, or those after the entry ``since``; and the leaf's id.

    :raises RpcCommandError: no entry has the id ``since`` (Pi's ``Entry not found``).
    """
    manager = rpc.agent.session_manager
    leaf_id = manager.get_leaf_id()
    entries = manager.get_entries_json()
    if "since" in command:
        since = command["since"]
        position = next(
            (index for index, entry in enumerate(entries) if entry.get("id") == since), None
        )
        if position is None:
            raise RpcCommandError(f"Entry not found: {js_string(since)}")
        entries = entries[position + 1 :]
    return {"entries": entries, "leafId": leaf_id}


def get_tree(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """The whole session as a tree of entries, and the leaf's id."""
    manager = rpc.agent.session_manager
    leaf_id = manager.get_leaf_id()
    roots = manager.get_tree()
    tree = tree_json(roots, manager.get_entries_json())
    return {"tree": orjson.Fragment(tree), "leafId": leaf_id}


def tree_json(roots: Sequence[SessionTreeNode], entries: Sequence[JsonObject]) -> bytes:
    """The JSON array of Pi's tree nodes for ``roots``, each node's entry being
    ``entries[node.index]``; written without recursion, however deep the tree."""
    out = bytearray(b"[")
    pending: list[SessionTreeNode | bytes] = [b"]"]
    _push_siblings(pending, roots)
    while pending:
        item = pending.pop()
        if isinstance(item, bytes):
            out += item
            continue
        out += b'{"entry":' + codec.dumps(entries[item.index]) + b',"children":['
        pending.append(b"]" + _label_members(item) + b"}")
        _push_siblings(pending, item.children)
    return bytes(out)


def _push_siblings(
    pending: list[SessionTreeNode | bytes], nodes: Sequence[SessionTreeNode]
) -> None:
    """Schedule ``nodes`` to be written in order, separated by commas (the last popped
    first)."""
    for position in range(len(nodes) - 1, -1, -1):
        pending.append(nodes[position])
        if position:
            pending.append(b",")


def _label_members(node: SessionTreeNode) -> bytes:
    """The node's ``label`` and ``labelTimestamp`` members, each left out when unset."""
    members = b""
    if node.label is not None:
        members += b',"label":' + codec.dumps(node.label)
    if node.label_timestamp is not None:
        members += b',"labelTimestamp":' + codec.dumps(node.label_timestamp)
    return members


def js_string(value: object) -> str:
    """``value`` (a JSON value) as JavaScript's ``String(value)`` writes it, for Pi's
    messages that quote a field of the command."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return codec.dumps(value).decode()
    if isinstance(value, list):
        # Array.prototype.join: null members are written as nothing.
        return ",".join("" if item is None else js_string(item) for item in value)
    return "[object Object]"


COMMANDS: Final[Mapping[str, RpcCommand]] = {
    "get_entries": RpcCommand(get_entries),
    "get_tree": RpcCommand(get_tree),
}
