"""The tree as the wire sends it: filters, subtrees, depth limits, changes since a cursor, and
the same rows whether kept up to date by appends or built from the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from session_testlib import assistant, eid, user

from rpc_agent.store import EntryNotFoundError, SessionManager
from rpc_agent.store.preview import PREVIEW_CHARS, one_line

pytestmark = pytest.mark.anyio

JsonDict = dict[str, Any]


def rows(manager: SessionManager, **options: Any) -> list[JsonDict]:
    result: list[JsonDict] = orjson.loads(manager.tree_json(**options))
    return result


async def _session(folder: Path) -> tuple[SessionManager, dict[str, str]]:
    """root user -> answer -> u1 -> a1, a branch from the answer (u2 -> a2), a custom entry."""
    manager = SessionManager.create("/p", folder)
    ids: dict[str, str] = {}
    ids["root"] = eid(manager.append_message(user("root question")))
    ids["answer"] = eid(manager.append_message(assistant("root answer")))
    ids["u1"] = eid(manager.append_message(user("first   follow-up\nwith lines")))
    ids["a1"] = eid(manager.append_message(assistant("first reply")))
    await manager.branch(ids["answer"])
    ids["u2"] = eid(manager.append_message(user("second follow-up")))
    ids["custom"] = eid(manager.append_custom_entry("ext.note", {"x": 1}))
    ids["a2"] = eid(manager.append_message(assistant("second reply")))
    await manager.append_label_change(ids["u1"], "keep")
    await manager.flush()
    return manager, ids


async def test_the_whole_tree_row_by_row(tmp_path: Path) -> None:
    manager, ids = await _session(tmp_path)
    with manager:
        got = [
            (r["id"], r["depth"], r["childCount"], r["role"], r["preview"], r["label"]) for r in rows(manager)
        ]
        assert got == [
            (ids["root"], 0, 1, "user", "root question", None),
            (ids["answer"], 1, 2, "assistant", "root answer", None),
            (ids["u1"], 2, 1, "user", "first follow-up with lines", "keep"),
            (ids["a1"], 3, 0, "assistant", "first reply", None),
            (ids["u2"], 2, 1, "user", "second follow-up", None),
            (ids["custom"], 3, 1, None, "ext.note", None),
            (ids["a2"], 4, 0, "assistant", "second reply", None),
        ]
        assert [r["parentId"] for r in rows(manager)][:3] == [None, ids["root"], ids["answer"]]


async def test_filters_subtree_and_depth(tmp_path: Path) -> None:
    manager, ids = await _session(tmp_path)
    with manager:
        assert [r["id"] for r in rows(manager, keep="user-only")] == [ids["root"], ids["u1"], ids["u2"]]
        assert [r["id"] for r in rows(manager, keep="labeled-only")] == [ids["u1"]]
        assert ids["custom"] not in [r["id"] for r in rows(manager, keep="no-custom")]
        assert [r["id"] for r in rows(manager, root=ids["u2"])] == [ids["u2"], ids["custom"], ids["a2"]]
        assert [r["id"] for r in rows(manager, root=ids["answer"], max_depth=1)] == [
            ids["answer"],
            ids["u1"],
            ids["u2"],
        ]
        assert [r["depth"] for r in rows(manager, max_depth=1)] == [0, 1]
        with pytest.raises(EntryNotFoundError):
            manager.tree_json(root="nope")


async def test_changes_since_a_cursor(tmp_path: Path) -> None:
    manager, ids = await _session(tmp_path)
    with manager:
        rows(manager)
        cursor = manager.tree_cursor
        assert rows(manager, since=cursor) == []
        new = eid(manager.append_message(user("third")))
        await manager.append_label_change(ids["a1"], "good")
        changed = {r["id"]: r for r in rows(manager, since=cursor)}
        assert set(changed) == {ids["a2"], new, ids["a1"]}  # the new node, its parent, the relabelled
        assert changed[ids["a2"]]["childCount"] == 1
        assert changed[ids["a1"]]["label"] == "good"
        assert changed[new]["depth"] == 5


async def test_rows_kept_up_to_date_equal_rows_built_from_the_file(tmp_path: Path) -> None:
    manager, ids = await _session(tmp_path)
    rows(manager)  # built now; everything below is applied to it as it happens
    await manager.branch(ids["root"])
    eid(manager.append_message(assistant("another answer")))
    await manager.branch(ids["u1"])
    eid(manager.append_message(assistant("a1 again")))
    await manager.append_label_change(ids["u1"], None)
    await manager.append_label_change(ids["root"], "start")
    kept = rows(manager)
    await manager.aclose()
    assert manager.session_file is not None
    with SessionManager.open(manager.session_file) as reopened:
        assert rows(reopened) == kept
        assert [(n.entry["id"], n.depth, n.childCount, n.label) for n in reopened.get_tree()] == [
            (r["id"], r["depth"], r["childCount"], r["label"]) for r in kept
        ]


def columns_as_rows(manager: SessionManager, **options: Any) -> list[JsonDict]:
    """The compact shape turned back into one object per node."""
    columns: dict[str, list[Any]] = orjson.loads(manager.tree_json(columns=True, **options))
    fields = list(columns)
    return [dict(zip(fields, values, strict=True)) for values in zip(*columns.values(), strict=True)]


OPTIONS: list[dict[str, Any]] = [
    {},
    {"keep": "user-only"},
    {"keep": "labeled-only"},
    {"keep": "no-custom", "max_depth": 3},
    {"max_depth": 1},
    {"since": 3},
]


async def test_columns_hold_exactly_the_rows_through_appends_and_relabels(tmp_path: Path) -> None:
    manager, ids = await _session(tmp_path)
    with manager:
        for options in OPTIONS:
            assert columns_as_rows(manager, **options) == rows(manager, **options), options
        assert columns_as_rows(manager, root=ids["u2"]) == rows(manager, root=ids["u2"])
        before = columns_as_rows(manager)  # the whole tree's encoding is kept ...
        new = eid(manager.append_message(user("third")))
        await manager.append_label_change(ids["a1"], "good")
        after = columns_as_rows(manager)  # ... until the next append
        assert after == rows(manager)
        assert len(after) == len(before) + 1
        assert {r["id"]: r["label"] for r in after}[ids["a1"]] == "good"
        assert {r["id"]: r["childCount"] for r in after}[ids["a2"]] == 1
        assert after[-1]["id"] == new
        with pytest.raises(EntryNotFoundError):
            manager.tree_json(root="nope", columns=True)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "short",
        "  lead and trail  ",
        "word " * 100,
        " " * 149 + "x" * 200,  # the first cut is all whitespace
        "a\u2003\u00a0" * 120,  # Unicode spaces
        "x" * 149 + " " + "y" * 300,
        "ab" + "\n\t " * 60 + "cd " * 200,
        "é" * 99 + "  " + "z" * 10,
    ],
)
def test_a_preview_is_the_head_of_the_whole_text_folded(text: str) -> None:
    assert one_line(text) == " ".join(text[: PREVIEW_CHARS * 4].split())[:PREVIEW_CHARS]
