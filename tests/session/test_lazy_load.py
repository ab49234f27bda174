"""Message lines are read as stubs at open and parsed when their content is needed.

Whatever is read lazily must come out exactly as an eager parse would give it.
"""

from __future__ import annotations

import base64
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from session_testlib import assistant, blocks_of, eid, entry, message_entry, user, write_session

from rpc_agent.io import background as background_module
from rpc_agent.io.background import Background, no_pause
from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.store import SessionManager, view
from rpc_agent.store import tree as tree_module
from rpc_agent.store.tree_shape import TreeShape


@pytest.fixture
async def branchy(tmp_path: Path) -> Path:
    """A closed session of 21 turns, a branch from its first message and a label."""
    manager = SessionManager.create("/p", tmp_path)
    first = eid(manager.append_message(user("first")))
    await manager.flush()
    await manager.append_message(assistant("one"))
    for turn in range(20):
        await manager.append_message(user(f"u{turn}"))
        await manager.append_message(assistant(f"a{turn}"))
    await manager.branch(first)
    await manager.append_message(user("other branch"))
    await manager.append_message(assistant("other answer"))
    await manager.append_label_change(first, "start")
    await manager.aclose()
    assert manager.session_file is not None
    return manager.session_file


def _json_paths(manager: SessionManager) -> tuple[object, ...]:
    """What the wire readers send, parsed back (stored lines go out as they are)."""
    settings = manager.context_settings()
    return (
        orjson.loads(manager.messages_json()),
        orjson.loads(manager.entries_json()),
        orjson.loads(manager.tree_json()),
        orjson.loads(manager.tree_json(keep="user-only")),
        orjson.loads(manager.tree_json(keep="labeled-only")),
        orjson.loads(manager.tree_json(keep="no-custom", max_depth=3)),
        orjson.loads(manager.tree_json(since=10)),
        orjson.loads(manager.tree_json(columns=True)),
        orjson.loads(manager.tree_json(keep="user-only", columns=True)),
        orjson.loads(manager.tree_json(since=10, max_depth=30, columns=True)),
        manager.context_message_count(),
        settings.thinkingLevel,
        settings.model,
    )


def _snapshot(path: Path) -> tuple[object, ...]:
    with SessionManager.open(path) as manager:
        wire = _json_paths(manager)
    with SessionManager.open(path) as manager:
        manager.warm_up()  # what a switch does: one walk of the path serves every reader after it
        warmed = _json_paths(manager)
    with SessionManager.open(path) as manager:
        root = manager.get_branch()[0]["id"]
        subtree = orjson.loads(manager.tree_json(root=root, max_depth=5))
        since = orjson.loads(manager.entries_json(root))
        context = manager.build_session_context()
        tree = [(n.entry, n.depth, n.childCount, n.label) for n in manager.get_tree()]
        return (
            context.messages,
            context.model,
            manager.leaf_id,
            manager.entries_since(None),
            tree,
            wire,
            warmed,
            subtree,
            since,
            _json_paths(manager),  # the same readers once every entry is parsed
        )


@pytest.mark.anyio
async def test_lazy_open_gives_exactly_what_an_eager_parse_gives(
    branchy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SessionManager.open(branchy) as manager:
        stored = manager._index.stored
        assert stored, "store-written message lines should be read as stubs"
        stubs = len(stored)
        manager.messages_json()
        manager.tree_json()
        manager.entries_json()
        assert len(stored) >= stubs - 1  # the JSON readers parse no message (but the model's)
        manager.build_session_context()
        assert 0 < len(stored) < stubs  # the context parsed only its own path
    lazy = _snapshot(branchy)
    monkeypatch.setenv("RPC_AGENT_EAGER_LOAD", "1")
    with SessionManager.open(branchy) as manager:
        assert not manager._index.stored
    eager = _snapshot(branchy)
    assert lazy == eager


def test_a_file_naming_an_id_twice_reads_lazily_as_it_reads_eagerly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "twice.jsonl"
    write_session(
        path,
        message_entry("00000001", None, 1, user("root")),
        message_entry("00000002", "00000001", 2, user("first of the name")),
        message_entry("00000003", "00000002", 3, assistant("under the first")),
        message_entry("00000002", "00000001", 4, user("second of the name")),
        message_entry("00000004", "00000002", 5, assistant("under the second")),
    )
    with SessionManager.open(path) as manager:
        assert manager._index.odd == {"00000002"}
        assert manager._index.stored
    lazy = _snapshot(path)
    monkeypatch.setenv("RPC_AGENT_EAGER_LOAD", "1")
    assert lazy == _snapshot(path)


def test_message_lines_of_other_shapes_read_lazily_as_they_read_eagerly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a message line of the usual shape is kept as a stub; any other shape is parsed the
    ordinary way, and the session reads the same either way."""
    no_parent: dict[str, Any] = {**message_entry("00000002", None, 2, assistant("no parentId key"))}
    del no_parent["parentId"]
    path = tmp_path / "shapes.jsonl"
    write_session(
        path,
        message_entry("00000001", None, 1, user("usual")),
        no_parent,
        {**message_entry("00000003", "00000001", 3, user("a number for a time")), "timestamp": 3},
        {**message_entry("00000004", "00000003", 4, user("extra field")), "extra": {"x": 1}},
        message_entry("00000005", "00000004", 5, "not an object"),  # type: ignore[arg-type]
        entry("label", "00000006", "00000005", 6, targetId="00000001", label="start"),
        message_entry("00000007", "00000005", 7, assistant("last")),
    )
    with SessionManager.open(path) as manager:
        stubs = {manager._index.entries[at]["id"] for at in manager._index.stored.lines}
        assert stubs == {"00000001", "00000004", "00000007"}
    lazy = _snapshot(path)
    monkeypatch.setenv("RPC_AGENT_EAGER_LOAD", "1")
    assert lazy == _snapshot(path)


@pytest.mark.anyio
async def test_a_damaged_message_line_with_a_good_prefix_is_reported_and_kept_out_of_the_context(
    branchy: Path,
) -> None:
    lines = branchy.read_bytes().split(b"\n")
    victim = next(i for i, line in enumerate(lines) if b'"content":"u5"' in line)
    victim_id = lines[victim][lines[victim].index(b'"id":"') + 6 :][:8].decode()
    lines[victim] = lines[victim][:120] + b"<<garbage"  # prefix intact, JSON broken
    branchy.write_bytes(b"\n".join(lines))
    with SessionManager.open(branchy) as manager:
        manager.branch(victim_id)
        texts = [m.get("content") for m in manager.build_session_context().messages]
        assert "u5" not in texts
        assert texts[:2] == ["first", [{"type": "text", "text": "one"}]]
        assert victim_id in manager.load_report.damaged_entries
        assert manager.get_entry(victim_id) is not None
        sent = orjson.loads(manager.messages_json())  # the broken line is never sent as JSON
        assert [m.get("content") for m in sent] == texts
        assert victim_id in [n["id"] for n in orjson.loads(manager.tree_json())]


@pytest.mark.anyio
async def test_blob_references_in_lazy_lines_are_restored_when_read(tmp_path: Path) -> None:
    picture = base64.b64encode(bytes(range(256)) * 8).decode()
    manager = SessionManager.create("/p", tmp_path)
    image_message: MessageDict = {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "data": picture, "mimeType": "image/png"},
        ],
        "timestamp": 1,
    }
    image_id = eid(manager.append_message(image_message))
    await manager.append_message(assistant("seen"))
    await manager.aclose()
    assert manager.session_file is not None
    assert b"blob:sha256:" in manager.session_file.read_bytes()
    with SessionManager.open(manager.session_file) as reopened:
        assert reopened._index.stored
        sent = orjson.loads(reopened.messages_json())
        assert sent[0]["content"][1]["data"] == picture  # restored, not sent as a reference
        sent_entries = orjson.loads(reopened.entries_json())
        assert sent_entries[0]["message"]["content"][1]["data"] == picture
        entry = reopened.get_entry(image_id)
        assert entry is not None
        assert blocks_of(entry["message"])[1]["data"] == picture


@pytest.mark.anyio
async def test_tree_rows_built_in_the_background_after_open_are_the_rows_a_request_builds(
    branchy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SessionManager.open(branchy) as manager:
        on_request = [
            orjson.loads(manager.tree_json()),
            orjson.loads(manager.tree_json(keep="user-only")),
            orjson.loads(manager.tree_json(columns=True)),
        ]
    monkeypatch.setattr(view, "PREPARE_TREE_ENTRIES", 0)
    with SessionManager.open(branchy) as manager:
        manager.warm_up(Background())  # starts the rows in a background thread; the request meets them
        prepared = [
            orjson.loads(manager.tree_json()),
            orjson.loads(manager.tree_json(keep="user-only")),
            orjson.loads(manager.tree_json(columns=True)),
        ]
        await manager.append_message(user("after the open"))
        nodes = orjson.loads(manager.tree_json())
        columns = orjson.loads(manager.tree_json(columns=True))
    assert prepared == on_request
    assert nodes[-1]["preview"] == "after the open"
    assert len(nodes) == len(on_request[0]) + 1
    assert columns["preview"][-1] == "after the open"
    assert columns["id"] == [n["id"] for n in nodes]


@pytest.mark.anyio
async def test_an_entry_appended_while_the_tree_is_built_in_the_background_is_in_the_tree(
    branchy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walking = threading.Event()
    walk = TreeShape.walk

    def slow_walk(tree: TreeShape) -> list[str]:
        walking.set()  # the ids are taken: an append now comes after the build's snapshot
        time.sleep(0.3)
        return walk(tree)

    monkeypatch.setattr(TreeShape, "walk", slow_walk)
    monkeypatch.setattr(view, "PREPARE_TREE_ENTRIES", 0)
    with SessionManager.open(branchy) as manager:
        manager.warm_up(Background())
        assert walking.wait(5)
        await manager.append_message(user("while building"))
        nodes = orjson.loads(manager.tree_json())
        columns = orjson.loads(manager.tree_json(columns=True))
    assert [n["preview"] for n in nodes].count("while building") == 1
    assert columns["preview"] == [n["preview"] for n in nodes]


@pytest.mark.anyio
async def test_the_background_build_waits_while_foreground_work_is_under_way(
    branchy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(view, "PREPARE_TREE_ENTRIES", 0)
    monkeypatch.setattr(tree_module, "SETTLE_ABOVE", 0)  # waits as a big tree's build does
    monkeypatch.setattr(background_module, "QUIET_WAIT", 30.0)  # no giving up on the wait in this test
    background = Background()
    with SessionManager.open(branchy) as manager:
        background.foreground.begin()  # a request being served
        try:
            manager.warm_up(background)
            await anyio.sleep(0.3)
            assert manager._tree.rows.previews == {}  # nothing built while it is served
        finally:
            background.foreground.end()
        assert manager._preparing is not None
        manager._preparing.join(10)
        assert not manager._preparing.is_alive()
        built = len(manager._tree.rows.previews)
        assert built == len(orjson.loads(manager.tree_json()))  # every node, before the request


@pytest.mark.anyio
async def test_leaving_a_session_stops_the_build_of_its_tree(
    branchy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(view, "PREPARE_TREE_ENTRIES", 0)
    monkeypatch.setattr(tree_module, "PREPARE_SLICE", 1)  # a pause between any two nodes
    monkeypatch.setattr(background_module, "QUIET_WAIT", 0.1)  # 44 nodes: over 4 s to build them all
    background = Background()
    with SessionManager.open(branchy) as manager:
        manager.warm_up(background)
        building = manager._preparing
        assert building is not None
    background.foreground.begin()  # served meanwhile: the build waits QUIET_WAIT between two nodes
    try:
        freeing = threading.Thread(target=manager.free_in_pieces, args=(background.pause,))
        freeing.start()
        building.join(2)
        assert not building.is_alive()  # stopped, not finished
    finally:
        background.foreground.end()
    freeing.join(10)
    assert not freeing.is_alive()
    assert manager.entries == []


@pytest.mark.anyio
async def test_a_closed_session_freed_in_pieces_is_empty_and_its_file_reads_as_before(
    branchy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(view, "PREPARE_TREE_ENTRIES", 0)  # the tree built in the background
    with SessionManager.open(branchy) as manager:
        manager.warm_up(Background())  # freeing waits for the background build
        before = _json_paths(manager)
        manager.build_session_context()
    manager.free_in_pieces(no_pause)
    assert (manager.entries, orjson.loads(manager.tree_json())) == ([], [])
    with SessionManager.open(branchy) as again:
        assert _json_paths(again) == before


@pytest.mark.anyio
async def test_a_stored_message_is_a_view_into_its_stored_line(branchy: Path) -> None:
    """The line is the only copy of a stub's bytes: its message is a slice of it, not of a
    bigger buffer kept alive with it, nor bytes of its own."""
    with SessionManager.open(branchy) as manager:
        stored = manager._index.stored
        assert stored
        for at, line in list(stored.lines.items()):
            assert bytes(stored.messages[at]) in line
            held = sys.getrefcount(line)
            del stored.messages[at]
            assert sys.getrefcount(line) == held - 1  # the message was what held it
