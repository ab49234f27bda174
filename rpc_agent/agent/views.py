"""What a front reads from a session: its messages, stats, tree rows, fork points, the page export.

Plain functions over the SessionManager: they change nothing, so they need none of the
AgentSession's run state.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

import anyio.to_thread
import orjson

from rpc_agent.protocol import methods as m
from rpc_agent.protocol.content import message_text
from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.store import guard
from rpc_agent.store.manager import SessionManager

if TYPE_CHECKING:
    from rpc_agent.checkpoints.engine import SessionCheckpoints


class TreeNodeDict(TypedDict):
    """One node of ``tree``: ``protocol.methods.TreeNode`` as the store's rows encode it."""

    id: str
    parentId: str | None
    type: str
    role: str | None
    preview: str
    label: str | None
    timestamp: str
    depth: int
    childCount: int


class TreeColumnsDict(TypedDict):
    """The nodes of ``tree`` as columns (``protocol.methods.TreeColumns``): node i is the i-th
    item of every list."""

    id: list[str]
    parentId: list[str | None]
    type: list[str]
    role: list[str | None]
    preview: list[str]
    label: list[str | None]
    timestamp: list[str]
    depth: list[int]
    childCount: list[int]


class TreeDict(TypedDict):
    """``get_tree``'s result (``protocol.methods.TreeResult``) as plain dicts: with format
    columns, ``nodes`` is empty and ``columns`` holds the nodes."""

    leafId: str | None
    nodes: list[TreeNodeDict]
    columns: NotRequired[TreeColumnsDict]
    cursor: int | None


def messages(manager: SessionManager) -> list[MessageDict]:
    return manager.build_session_context().messages


def last_assistant_text(manager: SessionManager) -> str | None:
    for message in reversed(messages(manager)):
        if message.get("role") == "assistant":
            text = message_text(message.get("content"))
            if text or message.get("stopReason") != "aborted":
                return text
    return None


def tree(manager: SessionManager, params: m.GetTreeParams | None = None) -> TreeDict:
    """The flat tree as plain dicts (for fronts that want objects, not JSON bytes)."""
    p = params or m.GetTreeParams()
    columns = p.format == "columns"
    nodes = orjson.loads(
        manager.tree_json(root=p.rootId, max_depth=p.maxDepth, keep=p.filter, since=p.since, columns=columns)
    )
    if columns:
        return {"leafId": manager.leaf_id, "nodes": [], "columns": nodes, "cursor": manager.tree_cursor}
    return {"leafId": manager.leaf_id, "nodes": nodes, "cursor": manager.tree_cursor}


def fork_messages(manager: SessionManager) -> list[m.ForkMessage]:
    return [
        m.ForkMessage(entryId=e["id"], text=message_text(e["message"].get("content")))
        for e in manager.entries
        if e.get("type") == "message"
        and isinstance(e.get("message"), dict)
        and e["message"].get("role") == "user"
    ]


async def export_html(
    manager: SessionManager, output_path: str | None, checkpoints: SessionCheckpoints | None = None
) -> str:
    """The whole tree as one self-contained page (see ``rpc_agent.export``, imported here: only
    this request needs the page's code), with the files each turn changed when checkpointed."""
    from rpc_agent import export

    changed: dict[str, list[dict[str, object]]] = {}
    if checkpoints is not None:
        from rpc_agent.checkpoints.engine import changes_by_entry

        parents = {e["id"]: e.get("parentId") for e in manager.entries if isinstance(e.get("id"), str)}
        changed = await anyio.to_thread.run_sync(
            changes_by_entry,
            checkpoints,
            lambda e: parents.get(e) if isinstance(parents.get(e), str) else None,
        )
    data = export.page_data(manager, changed)  # here, on the loop: the manager is not thread-safe
    target = Path(output_path).expanduser() if output_path else export.default_output_path(manager)
    # Never over a session file: the live one under any name, or any other session.
    await anyio.to_thread.run_sync(lambda: guard.check_write_target(target, live=manager.session_file))
    await anyio.to_thread.run_sync(export.write_page, data, target)
    return str(target)
