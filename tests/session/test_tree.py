"""The tree view: flat depth-first, children oldest first, labels, leaf markers hidden."""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType

import orjson
import pytest
from session_testlib import (
    assistant,
    blocks_of,
    eid,
    entry,
    header,
    iso,
    message_entry,
    user,
    write_jsonl,
    write_session,
)

from rpc_agent.store import LEAF_MARKER, EntryNotFoundError, SessionManager, TreeNode

R1, A1, LATE, EARLY, TIE1, TIE2, X1, LBL, MARK, MKCHILD, ORPHAN = (
    "00000001",
    "00000002",
    "00000003",
    "00000004",
    "00000005",
    "00000006",
    "00000007",
    "00000008",
    "00000009",
    "0000000a",
    "0000000b",
)

TREE_FILE = [
    header(),
    message_entry(R1, None, 1, user("root")),
    message_entry(A1, R1, 2, assistant("a1")),
    message_entry(LATE, A1, 10, user("late")),  # earlier in the file, later in time
    message_entry(EARLY, A1, 5, user("early")),
    message_entry(TIE1, A1, 7, user("tie first")),  # same timestamp: file order decides
    message_entry(TIE2, A1, 7, user("tie second")),
    message_entry(X1, TIE2, 8, assistant("x1")),
    entry("label", LBL, X1, 9, targetId=EARLY, label="early-bird"),
    entry("custom", MARK, A1, 11, customType=LEAF_MARKER),
    message_entry(MKCHILD, MARK, 12, user("child of a marker")),
    message_entry(ORPHAN, "0badc0de", 0.5, user("orphan")),
]


def rows(tree: list[TreeNode]) -> list[tuple[str, int, str | None, int, str | None]]:
    return [(n.entry["id"], n.depth, n.parentId, n.childCount, n.label) for n in tree]


@pytest.fixture
def tree_session(tmp_path: Path) -> SessionManager:
    path = tmp_path / "tree.jsonl"
    write_jsonl(path, TREE_FILE)
    return SessionManager.open(path)


def test_get_tree_is_flat_depth_first_with_children_oldest_first(tree_session: SessionManager) -> None:
    with tree_session as manager:
        tree = manager.get_tree()
    assert rows(tree) == [
        (ORPHAN, 0, None, 0, None),
        (R1, 0, None, 1, None),
        (A1, 1, R1, 5, None),
        (EARLY, 2, A1, 0, "early-bird"),
        (TIE1, 2, A1, 0, None),
        (TIE2, 2, A1, 1, None),
        (X1, 3, TIE2, 0, None),
        (LATE, 2, A1, 0, None),
        (MKCHILD, 2, A1, 0, None),
    ]


def test_leaf_markers_and_labels_are_hidden_from_the_tree_and_see_through(
    tree_session: SessionManager,
) -> None:
    with tree_session as manager:
        ids = [node.entry["id"] for node in manager.get_tree()]
        children = [e["id"] for e in manager.get_children(A1)]
    assert MARK not in ids
    assert LBL not in ids
    assert children == [EARLY, TIE1, TIE2, LATE, MKCHILD]


def test_get_children_lists_direct_children_oldest_first(tree_session: SessionManager) -> None:
    with tree_session as manager:
        assert [e["id"] for e in manager.get_children(TIE2)] == [X1]
        assert manager.get_children(LATE) == []
        assert [e["id"] for e in manager.get_children(None)] == [R1]


def test_get_branch_walks_root_to_entry_and_defaults_to_the_leaf(tree_session: SessionManager) -> None:
    with tree_session as manager:
        assert [e["id"] for e in manager.get_branch(X1)] == [R1, A1, TIE2, X1]
        assert manager.leaf_id == ORPHAN  # the last line of the file
        assert [e["id"] for e in manager.get_branch()] == [ORPHAN]
        with pytest.raises(EntryNotFoundError):
            manager.get_branch("ffffffff")


def test_tree_of_a_live_session_hides_markers_written_by_branch(tmp_path: Path) -> None:
    with SessionManager.create("/p", tmp_path) as manager:
        u1 = eid(manager.append_message(user("u1")))
        a1 = eid(manager.append_message(assistant("a1")))
        u2 = eid(manager.append_message(user("u2")))
        manager.branch(u1)
        markers = [e for e in manager.entries if e.get("customType") == LEAF_MARKER]
        tree = manager.get_tree()
    assert len(markers) == 1
    assert markers[0]["parentId"] == u1
    assert rows(tree) == [(u1, 0, None, 1, None), (a1, 1, u1, 1, None), (u2, 2, a1, 0, None)]


def test_labels_are_attached_to_tree_nodes_and_latest_wins() -> None:
    manager = SessionManager.in_memory("/p")
    u1 = eid(manager.append_message(user("u1")))
    manager.append_label_change(u1, "first")
    manager.append_label_change(u1, "second")
    by_id = {node.entry["id"]: node for node in manager.get_tree()}
    assert by_id[u1].label == "second"
    manager.append_label_change(u1, None)
    assert {node.entry["id"]: node for node in manager.get_tree()}[u1].label is None


def current_depth() -> int:
    depth = 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def test_hundred_thousand_entry_session_needs_no_recursion(tmp_path: Path) -> None:
    count = 100_000
    # A chain of messages, each the child of the one before, a millisecond apart: the lines are
    # filled into two encoded messages and one encoded entry (building 100,000 dicts would take
    # longer than reading them back).
    line = '{"type":"message","id":"%08x","parentId":%s,"timestamp":"%s%03dZ","message":%s}\n'
    messages = [orjson.dumps(user("u%d")).decode(), orjson.dumps(assistant("a%d")).decode()]
    seconds = [iso(s)[:-4] for s in range(count // 1000 + 1)]  # "...T14:00:07." and so on
    lines = [orjson.dumps(header()).decode() + "\n"]
    for i in range(count):
        parent = f'"{i - 1:08x}"' if i else "null"
        lines.append(line % (i, parent, seconds[i // 1000], i % 1000, messages[i % 2] % i))
    path = tmp_path / "big.jsonl"
    path.write_text("".join(lines))

    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(current_depth() + 100)
    try:
        manager = SessionManager.open(path)
        context = manager.build_session_context()
        tree = manager.get_tree()
        branch = manager.get_branch()
    finally:
        sys.setrecursionlimit(previous)
    manager.close()

    assert len(context.messages) == count
    assert blocks_of(context.messages[-1])[0]["text"] == f"a{count - 1}"
    assert len(tree) == count
    assert tree[-1].depth == count - 1
    assert tree[-1].entry["id"] == f"{count - 1:08x}"
    assert all(node.childCount == 1 for node in tree[:-1])
    assert len(branch) == count


MARK2, UNDER_MARKS, LBL2, UNDER_LABEL, SELF = "0000000c", "0000000d", "0000000e", "0000000f", "00000010"
HIDDEN_CHAINS = [
    entry("custom", MARK2, MARK, 13, customType=LEAF_MARKER),  # a marker under a marker
    message_entry(UNDER_MARKS, MARK2, 14, user("under two markers")),
    entry("label", LBL2, "0badc0de", 15, targetId=R1, label="r"),  # a label with a missing parent
    message_entry(UNDER_LABEL, LBL2, 16, user("under an orphaned label")),
]


def test_the_tree_regrouped_from_the_index_is_the_tree_placed_entry_by_entry(tmp_path: Path) -> None:
    """The index's groups by parent become the tree with only hidden entries and missing
    parents moved; a file with an odd entry places every entry instead. Both give the same."""
    path = tmp_path / "tree.jsonl"
    write_jsonl(path, [*TREE_FILE, *HIDDEN_CHAINS])
    with SessionManager.open(path) as regrouped:
        assert not regrouped._index.odd
        fast = rows(regrouped.get_tree())
    with SessionManager.open(path) as careful:
        careful._index.odd.add("not-an-entry")  # takes the entry-by-entry way
        slow = rows(careful.get_tree())
    assert fast == slow
    assert (UNDER_MARKS, 2, A1, 0, None) in fast
    assert (UNDER_LABEL, 0, None, 0, None) in fast


def test_an_entry_that_names_itself_as_parent_is_a_root(tmp_path: Path) -> None:
    path = tmp_path / "tree.jsonl"
    write_session(path, message_entry(R1, None, 1, user("root")), message_entry(SELF, SELF, 2, user("me")))
    with SessionManager.open(path) as manager:
        assert manager._index.odd == {SELF}
        assert rows(manager.get_tree()) == [(R1, 0, None, 0, None), (SELF, 0, None, 0, None)]
