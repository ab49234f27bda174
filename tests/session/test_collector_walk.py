"""What an open session costs the cyclic collector, and what an append costs a built tree.

CPython's collector runs a full collection every few thousand allocations of the process (any
allocation: a request's, an append's), and the full collection visits every reference held by
a tracked container. A session's id groups and tree order, held as a dict of lists and a list,
made each full collection visit a few references per entry: a pipelined burst of labels on a
100,000-entry session met one such collection and slowed to a quarter. The tests count the
references, not the time.
"""

from __future__ import annotations

import gc
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from session_testlib import assistant, eid, header, message_entry, user, write_jsonl

from rpc_agent.store import SessionManager
from rpc_agent.store.tree_shape import TreeShape

ENTRIES = 3000

_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
"""Where the walk stops: the code and classes every session shares, not the session's own."""


def _visited_by_a_full_collection(root: object) -> int:
    """References a full collection visits among the objects ``root`` holds: the referents of
    each tracked object reachable from it (an untracked dict or tuple is never visited)."""
    seen: set[int] = set()
    stack: list[object] = [root]
    visited = 0
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, _OPAQUE):
            continue
        seen.add(id(item))
        referents = gc.get_referents(item)
        if gc.is_tracked(item):
            visited += len(referents)
        stack.extend(referents)
    return visited


def _long_session(path: Path) -> Path:
    """``ENTRIES`` messages in one line, a side branch every 100, as another writer left them."""
    lines: list[Any] = [header(cwd=str(path.parent))]
    parent: str | None = None
    for number in range(1, ENTRIES + 1):
        entry_id = f"{number:08x}"
        if number % 100 == 0 and parent is not None:
            side = f"{number + 0x10000000:08x}"
            lines.append(message_entry(side, parent, number, user(f"side {number}")))
        message = user(f"u{number}") if number % 2 else assistant(f"a{number}")
        lines.append(message_entry(entry_id, parent, number, message))
        parent = entry_id
    write_jsonl(path, lines)
    return path


@pytest.mark.anyio
async def test_a_full_collection_visits_no_more_than_the_entries_and_their_ids(tmp_path: Path) -> None:
    path = _long_session(tmp_path / "long.jsonl")
    with SessionManager.open(path) as manager:
        count = len(manager._index.entries)
        assert count > ENTRIES
        manager.tree_json(columns=True)  # the tree built, its rows and columns kept
        manager.tree_json()
        target = f"{10:08x}"  # by its id: reading the branch would parse every message on it
        for n in range(50):
            await manager.append_label_change(target, f"label {n}", move_leaf=False)
        await manager.append_message(user("after the labels"))
        manager.tree_json()  # the order walked again after the appends
        gc.collect()  # a tuple of strings is untracked by the first collection that meets it
        visited = _visited_by_a_full_collection(manager)
    # The entries in file order and by id must be dicts held by a list and a dict: two
    # references per entry. The groups, the tree's order and its rows add none per entry.
    assert visited < 2 * count + 1500, (visited, count)


class _WatchedOrder(list[str]):
    """A tree order that counts the searches of it and the walks through it."""

    searches = 0

    def index(self, *args: Any) -> int:
        _WatchedOrder.searches += 1
        return super().index(*args)

    def __contains__(self, item: object) -> bool:
        _WatchedOrder.searches += 1
        return super().__contains__(item)

    def __iter__(self) -> Iterator[str]:
        _WatchedOrder.searches += 1
        return super().__iter__()


@pytest.mark.anyio
async def test_an_append_to_a_built_tree_does_not_search_the_order_of_its_nodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _long_session(tmp_path / "long.jsonl")
    with SessionManager.open(path) as manager:
        before = orjson.loads(manager.tree_json())
        shape = manager._tree.shape
        watched = _WatchedOrder(shape.order or ())
        monkeypatch.setattr(shape, "order", watched)
        middle = f"{ENTRIES // 2:08x}"
        first = eid(manager.append_message(user("at the leaf")))  # last in the order
        manager.append_message(assistant("its answer"))
        manager.branch(middle)
        manager.append_message(user("under a node in the middle"))
        await manager.append_label_change(first, "marked", move_leaf=False)
        await manager.flush()
        assert _WatchedOrder.searches == 0
        after = orjson.loads(manager.tree_json())
    with SessionManager.open(path) as reopened:
        assert after == orjson.loads(reopened.tree_json())
    assert len(after) == len(before) + 3
    assert [n["preview"] for n in after[-2:]] == ["its answer", "under a node in the middle"]
    placed = next(n for n in after if n["preview"] == "under a node in the middle")
    assert placed["parentId"] == middle


def test_the_order_of_a_built_tree_is_a_tuple_the_collector_lets_go_of(tmp_path: Path) -> None:
    path = _long_session(tmp_path / "long.jsonl")
    with SessionManager.open(path) as manager:
        manager.tree_json()
        shape: TreeShape = manager._tree.shape
        gc.collect()
        assert isinstance(shape.order, tuple)
        assert not gc.is_tracked(shape.order)
        assert not gc.is_tracked(shape.groups.single)
        assert not gc.is_tracked(manager._index.children.single)


@pytest.mark.anyio
async def test_a_tree_read_between_appends_is_the_tree_of_the_file(tmp_path: Path) -> None:
    path = _long_session(tmp_path / "long.jsonl")
    with SessionManager.open(path) as manager:
        before = orjson.loads(manager.tree_json(columns=True))["id"]
        added = [eid(manager.append_message(user("next"))), eid(manager.append_message(assistant("answer")))]
        await manager.append_label_change(added[0], "seen", move_leaf=False)
        assert orjson.loads(manager.tree_json(columns=True))["id"] == [*before, *added]
        manager.branch(f"{5:08x}")
        added.append(eid(manager.append_message(user("a branch near the root"))))
        added.append(eid(manager.append_message(assistant("its answer"))))
        await manager.flush()
        rows = orjson.loads(manager.tree_json())
    with SessionManager.open(path) as reopened:
        assert rows == orjson.loads(reopened.tree_json())
    assert {n["id"] for n in rows} == {*before, *added}


def test_get_tree_leaves_the_entries_as_it_found_them(tmp_path: Path) -> None:
    """``get_tree`` hands out every entry complete; a session read from a file keeps its
    messages as stored lines after it, and the collector walks no more than before."""
    path = _long_session(tmp_path / "long.jsonl")
    with SessionManager.open(path) as manager:
        manager.tree_json()  # the shape and the rows built, as get_tree builds them too
        stored = len(manager._index.stored)
        assert stored > ENTRIES
        gc.collect()
        before = _visited_by_a_full_collection(manager)
        nodes = manager.get_tree()
        assert len(nodes) > ENTRIES
        assert all("message" in node.entry for node in nodes)
        assert nodes[-1].entry["message"]["content"] == [{"type": "text", "text": f"a{ENTRIES}"}]
        del nodes
        gc.collect()
        assert len(manager._index.stored) == stored
        assert not any("message" in entry for entry in manager._index.entries)
        after = _visited_by_a_full_collection(manager)
    assert after <= before, (before, after)


def test_get_tree_gives_the_entries_that_the_readers_of_the_file_give(tmp_path: Path) -> None:
    path = _long_session(tmp_path / "long.jsonl")
    with SessionManager.open(path) as manager:
        from_tree = {node.entry["id"]: node.entry for node in manager.get_tree()}
        from_file = {entry["id"]: entry for entry in orjson.loads(manager.entries_json())}
        assert from_tree == from_file
        assert [list(e) for e in from_tree.values()] == [list(from_file[i]) for i in from_tree]
        loaded = {entry["id"]: entry for entry in manager.entries_since(None)}  # parsed in place
        assert from_tree == loaded
