"""The leaf survives a restart, and pi's "last line is the leaf" rule builds the same context."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from session_testlib import assistant, context_of, eid, pi_build_context, read_lines, user

from rpc_agent.store import LEAF_MARKER, EntryNotFoundError, SessionManager


def conversation(tmp_path: Path) -> tuple[SessionManager, list[str]]:
    """u1 a1 u2 a2, on disk."""
    manager = SessionManager.create("/p", tmp_path)
    ids = [
        eid(manager.append_message(user("u1"))),
        eid(manager.append_message(assistant("a1"))),
        eid(manager.append_message(user("u2"))),
        eid(manager.append_message(assistant("a2"))),
    ]
    return manager, ids


def reopen(path: Path | None) -> SessionManager:
    assert path is not None
    return SessionManager.open(path)


@pytest.mark.anyio
async def test_reopen_restores_leaf_after_navigation_without_append(tmp_path: Path) -> None:
    manager, (u1, a1, _u2, _a2) = conversation(tmp_path)
    await manager.branch(a1)
    before = manager.build_session_context()
    await manager.aclose()

    with reopen(manager.session_file) as again:
        assert again.leaf_id == a1
        after = again.build_session_context()
        assert after.messages == before.messages
        assert context_of(again) == [("user", "u1"), ("assistant", "a1")]
        child = eid(again.append_message(user("u3")))
        assert again.require_entry(child)["parentId"] == a1
    assert u1 != a1


def test_branch_writes_a_hidden_custom_marker_whose_parent_is_the_new_leaf(tmp_path: Path) -> None:
    manager, (u1, *_rest) = conversation(tmp_path)
    manager.branch(u1)
    manager.close()
    assert manager.session_file is not None
    last = read_lines(manager.session_file)[-1]
    assert last["type"] == "custom"
    assert last["customType"] == LEAF_MARKER
    assert last["parentId"] == u1


def test_branch_to_the_current_last_entry_writes_nothing(tmp_path: Path) -> None:
    manager, (*_rest, a2) = conversation(tmp_path)
    manager.branch(a2)
    manager.close()
    assert manager.session_file is not None
    assert len(read_lines(manager.session_file)) == 5


def test_branch_to_an_unknown_entry_raises_and_keeps_the_leaf(tmp_path: Path) -> None:
    manager, (*_rest, a2) = conversation(tmp_path)
    with manager, pytest.raises(EntryNotFoundError):
        manager.branch("ffffffff")
    assert manager.leaf_id == a2
    assert manager.session_file is not None
    assert len(read_lines(manager.session_file)) == 5


def test_reopen_after_reset_leaf_gives_an_empty_context_and_a_new_root(tmp_path: Path) -> None:
    manager, _ids = conversation(tmp_path)
    manager.reset_leaf()
    manager.close()
    with reopen(manager.session_file) as again:
        assert again.leaf_id is None
        assert again.build_session_context().messages == []
        root = eid(again.append_message(user("fresh start")))
        assert again.require_entry(root)["parentId"] is None
        assert context_of(again) == [("user", "fresh start")]


def test_reopen_after_branch_with_summary_keeps_the_summary_as_leaf(tmp_path: Path) -> None:
    manager, (u1, a1, _u2, _a2) = conversation(tmp_path)
    summary = eid(manager.branch_with_summary(a1, "tried u2"))
    manager.close()
    with reopen(manager.session_file) as again:
        assert again.leaf_id == summary
        assert context_of(again) == [("user", "u1"), ("assistant", "a1"), ("branchSummary", "tried u2")]
    assert u1


def test_several_navigations_reopen_at_the_last_one(tmp_path: Path) -> None:
    manager, (u1, a1, u2, _a2) = conversation(tmp_path)
    manager.branch(u1)
    manager.branch(u2)
    manager.branch(a1)
    manager.close()
    with reopen(manager.session_file) as again:
        assert again.leaf_id == a1
        assert [n.entry["id"] for n in again.get_tree()] == [u1, a1, u2, _a2]


Navigation = Callable[[SessionManager, list[str]], None]


def nav_branch(manager: SessionManager, ids: list[str]) -> None:
    manager.branch(ids[1])


def nav_reset(manager: SessionManager, ids: list[str]) -> None:
    manager.reset_leaf()


def nav_branch_then_label(manager: SessionManager, ids: list[str]) -> None:
    manager.branch(ids[0])
    manager.append_label_change(ids[2], "elsewhere")


def nav_branch_then_append(manager: SessionManager, ids: list[str]) -> None:
    manager.branch(ids[1])
    manager.append_message(user("u3"))
    manager.append_message(assistant("a3"))
    manager.branch(ids[2])


def nav_summary_then_branch(manager: SessionManager, ids: list[str]) -> None:
    manager.branch_with_summary(ids[0], "left the rest")
    manager.append_custom_message_entry("ext", "note", display=False)
    manager.branch(ids[3])
    manager.branch(ids[0])


def nav_compaction_then_branch(manager: SessionManager, ids: list[str]) -> None:
    manager.append_compaction("summary of u1 a1", ids[2], 1234)
    manager.append_message(user("u3"))
    manager.append_thinking_level_change("high")
    manager.branch(ids[2])


def nav_reset_then_branch_back(manager: SessionManager, ids: list[str]) -> None:
    manager.reset_leaf()
    manager.append_message(user("second root"))
    manager.branch(ids[3])


@pytest.mark.parametrize(
    "navigate",
    [
        nav_branch,
        nav_reset,
        nav_branch_then_label,
        nav_branch_then_append,
        nav_summary_then_branch,
        nav_compaction_then_branch,
        nav_reset_then_branch_back,
    ],
)
def test_pi_last_line_rule_builds_the_same_context_as_our_leaf(tmp_path: Path, navigate: Navigation) -> None:
    manager, ids = conversation(tmp_path)
    navigate(manager, ids)
    ours = manager.build_session_context().messages
    manager.close()
    assert manager.session_file is not None
    assert pi_build_context(manager.session_file) == ours
    with reopen(manager.session_file) as again:
        assert again.build_session_context().messages == ours


def test_entry_appended_by_pi_after_our_marker_continues_the_branch(tmp_path: Path) -> None:
    manager, (u1, a1, u2, a2) = conversation(tmp_path)
    manager.branch(a1)
    manager.close()
    assert manager.session_file is not None
    path = manager.session_file
    marker = read_lines(path)[-1]
    # pi takes the marker (the last line) as its leaf, so its next entry is the marker's child.
    pi_entry = {
        "type": "message",
        "id": "0000beef",
        "parentId": marker["id"],
        "timestamp": "2030-01-01T00:00:00.000Z",
        "message": user("from pi"),
    }
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(pi_entry) + "\n")

    with reopen(path) as again:
        assert again.leaf_id == "0000beef"
        assert context_of(again) == [("user", "u1"), ("assistant", "a1"), ("user", "from pi")]
        assert [e["id"] for e in again.get_children(a1)] == [u2, "0000beef"]
        tree = {node.entry["id"]: node for node in again.get_tree()}
        assert marker["id"] not in tree
        assert tree["0000beef"].parentId == a1
        assert tree["0000beef"].depth == 2
    assert pi_build_context(path) == again.build_session_context().messages
    assert u1
    assert a2
