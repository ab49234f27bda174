"""Labels (latest wins, None or "" clears) and the session name (latest non-empty session_info)."""

from __future__ import annotations

from pathlib import Path

import pytest
from session_testlib import assistant, eid, entry, message_entry, read_lines, user, write_session

from rpc_agent.store import EntryNotFoundError, SessionManager, listing


def test_latest_label_wins_and_survives_reopen(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path)
    u1 = eid(manager.append_message(user("u1")))
    a1 = eid(manager.append_message(assistant("a1")))
    manager.append_label_change(u1, "first")
    manager.append_label_change(a1, "other")
    manager.append_label_change(u1, "second")
    assert manager.get_label(u1) == "second"
    assert manager.labels == {u1: "second", a1: "other"}
    manager.close()
    assert manager.session_file is not None
    with SessionManager.open(manager.session_file) as again:
        assert again.get_label(u1) == "second"
        assert again.get_label(a1) == "other"


@pytest.mark.parametrize("cleared", [None, ""])
def test_none_or_empty_label_clears_it_also_after_reopen(tmp_path: Path, cleared: str | None) -> None:
    manager = SessionManager.create("/p", tmp_path)
    u1 = eid(manager.append_message(user("u1")))
    manager.append_message(assistant("a1"))
    manager.append_label_change(u1, "checkpoint")
    manager.append_label_change(u1, cleared)
    assert manager.get_label(u1) is None
    manager.close()
    assert manager.session_file is not None
    last = read_lines(manager.session_file)[-1]
    assert last["type"] == "label"
    assert "label" not in last  # pi writes `label: undefined`, i.e. no key
    with SessionManager.open(manager.session_file) as again:
        assert again.get_label(u1) is None
        assert again.labels == {}


def test_label_on_an_unknown_entry_raises_and_appends_nothing() -> None:
    manager = SessionManager.in_memory("/p")
    manager.append_message(user("u1"))
    with pytest.raises(EntryNotFoundError) as caught:
        manager.append_label_change("ffffffff", "nope")
    assert caught.value.entry_id == "ffffffff"
    assert len(manager.entries) == 1


def test_label_entries_are_children_of_the_leaf_and_become_the_leaf() -> None:
    manager = SessionManager.in_memory("/p")
    u1 = eid(manager.append_message(user("u1")))
    label = eid(manager.append_label_change(u1, "x"))
    assert manager.require_entry(label)["parentId"] == u1
    assert manager.leaf_id == label


def test_session_name_is_the_latest_session_info_and_empty_clears_it(tmp_path: Path) -> None:
    assert SessionManager.in_memory("/p").session_name is None
    manager = SessionManager.create("/p", tmp_path)
    manager.append_message(user("u1"))
    a1 = eid(manager.append_message(assistant("a1")))
    names = []
    for name in ["first", "  second  ", "   ", "third"]:
        manager.append_session_info(name)
        names.append(manager.session_name)
    assert names == ["first", "second", None, "third"]
    manager.close()
    assert manager.session_file is not None
    with SessionManager.open(manager.session_file) as again:
        assert again.session_name == "third"
        again.branch(a1)  # the name does not depend on the branch
        assert again.session_name == "third"
        again.append_session_info("")
        names.append(again.session_name)
    listed = listing.session_info(manager.session_file)
    assert listed is not None
    assert (names[-1], listed.name) == (None, None)


def test_label_entry_with_an_empty_or_null_label_in_a_file_clears_it(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    write_session(
        path,
        message_entry("00000001", None, 1, user("u1")),
        entry("label", "00000002", "00000001", 2, targetId="00000001", label="a"),
        entry("label", "00000003", "00000002", 3, targetId="00000001", label=""),
        message_entry("00000004", "00000003", 4, user("u2")),
        entry("label", "00000005", "00000004", 5, targetId="00000004", label="b"),
        entry("label", "00000006", "00000005", 6, targetId="00000004", label=None),
    )
    with SessionManager.open(path) as manager:
        assert manager.get_label("00000001") is None
        assert manager.get_label("00000004") is None
        assert manager.labels == {}


def test_label_without_moving_the_leaf_keeps_position_and_context_across_reopen(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path)
    u1 = eid(manager.append_message(user("u1")))
    a1 = eid(manager.append_message(assistant("a1")))
    label_id = eid(manager.append_label_change(u1, "start", move_leaf=False))
    assert manager.leaf_id == a1
    assert manager.get_entry(label_id)["parentId"] == a1  # type: ignore[index]
    before = manager.build_session_context().messages
    manager.close()
    assert manager.session_file is not None
    with SessionManager.open(manager.session_file) as again:
        assert again.leaf_id == a1
        assert again.build_session_context().messages == before
        assert again.get_label(u1) == "start"


def test_reopen_looks_through_a_trailing_label_that_moved_the_leaf(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path)
    manager.append_message(user("u1"))
    a1 = eid(manager.append_message(assistant("a1")))
    label_id = eid(manager.append_label_change(a1, "here"))
    assert manager.leaf_id == label_id  # the reference behaviour: an append is the leaf
    manager.close()
    assert manager.session_file is not None
    with SessionManager.open(manager.session_file) as again:
        assert again.leaf_id == a1
        assert [n.entry["id"] for n in again.get_tree()][-1] == a1
