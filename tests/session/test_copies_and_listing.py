"""New files from old ones (branched sessions, forks) and finding sessions again."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from session_testlib import (
    BASE_MS,
    assistant,
    context_of,
    count_headers,
    eid,
    header,
    message_entry,
    pi_build_context,
    read_lines,
    session_path,
    summarize,
    user,
    write_jsonl,
)

from rpc_agent.store import (
    EntryNotFoundError,
    SessionManager,
    build_session_context,
    list_all_sessions,
    list_sessions,
)


def branched_source(tmp_path: Path) -> tuple[SessionManager, dict[str, str]]:
    """u1 a1 [label u1] u2 a2 [label a2], then a second branch u3 a3 from a1."""
    manager = SessionManager.create("/src", tmp_path)
    ids: dict[str, str] = {}
    ids["u1"] = eid(manager.append_message(user("u1")))
    ids["a1"] = eid(manager.append_message(assistant("a1")))
    ids["label_u1"] = eid(manager.append_label_change(ids["u1"], "start"))
    ids["u2"] = eid(manager.append_message(user("u2")))
    ids["a2"] = eid(manager.append_message(assistant("a2")))
    ids["label_a2"] = eid(manager.append_label_change(ids["a2"], "good answer"))
    manager.branch(ids["a1"])
    ids["u3"] = eid(manager.append_message(user("u3")))
    ids["a3"] = eid(manager.append_message(assistant("a3")))
    manager.append_label_change(ids["u3"], "other branch")
    return manager, ids


@pytest.mark.anyio
async def test_branched_session_holds_only_the_root_to_leaf_path_with_ids_unchanged(tmp_path: Path) -> None:
    source, ids = branched_source(tmp_path)
    await source.flush()
    expected_context = build_session_context(source.entries, ids["a2"]).messages

    branched = source.create_branched_session(ids["a2"])
    path = session_path(branched)
    assert path != session_path(source)
    assert path.exists()  # the path has an assistant message: written at once
    lines = read_lines(path)
    await branched.aclose()
    await source.aclose()

    assert count_headers(path) == 1
    head, entries = lines[0], lines[1:]
    assert head["parentSession"] == str(session_path(source))
    assert head["version"] == 3
    assert head["id"] != source.session_id
    messages = [e for e in entries if e["type"] == "message"]
    assert [e["id"] for e in messages] == [ids["u1"], ids["a1"], ids["u2"], ids["a2"]]
    assert [e["parentId"] for e in messages] == [None, ids["u1"], ids["a1"], ids["u2"]]
    for e in messages:
        assert e == {**source.require_entry(e["id"]), "parentId": e["parentId"]}
    # The chain is whole: every entry's parent is in the new file, and the context is the same.
    present = {e["id"] for e in entries}
    assert all(e["parentId"] is None or e["parentId"] in present for e in entries)
    assert pi_build_context(path) == expected_context
    with SessionManager.open(path) as reopened:
        assert reopened.build_session_context().messages == expected_context
        assert reopened.labels == {ids["u1"]: "start", ids["a2"]: "good answer"}
        assert ids["u3"] not in {e.get("id") for e in reopened.entries}


@pytest.mark.anyio
async def test_branched_session_of_a_path_without_assistant_is_deferred(tmp_path: Path) -> None:
    source, ids = branched_source(tmp_path)
    branched = source.create_branched_session(ids["u1"])
    path = session_path(branched)
    assert not path.exists()
    assert branched.labels == {ids["u1"]: "start"}
    await branched.append_message(assistant("a different answer"))
    lines = read_lines(path)
    await branched.aclose()
    await source.aclose()
    assert count_headers(path) == 1
    assert lines[0]["parentSession"] == str(session_path(source))
    assert [e["type"] for e in lines[1:]] == ["message", "label", "message"]
    with SessionManager.open(path) as reopened:
        assert context_of(reopened) == [("user", "u1"), ("assistant", "a different answer")]


@pytest.mark.anyio
async def test_branched_session_keeps_a_compaction_across_a_dropped_label(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path)
    u1 = eid(manager.append_message(user("u1")))
    manager.append_message(assistant("a1"))
    label = eid(manager.append_label_change(u1, "mark"))
    u2 = eid(manager.append_message(user("u2")))
    manager.append_message(assistant("a2"))
    # Keeping "from the label" means keeping from the first real entry after it.
    leaf = eid(manager.append_compaction("summary", label, 100))
    expected = context_of(manager)
    branched = manager.create_branched_session(leaf)
    got = context_of(branched)
    compaction = branched.require_entry(leaf)
    await branched.aclose()
    await manager.aclose()
    assert expected == [("compactionSummary", "summary"), ("user", "u2"), ("assistant", "a2")]
    assert got == expected
    assert compaction["firstKeptEntryId"] == u2


@pytest.mark.anyio
async def test_fork_from_copies_another_session_into_a_new_file_with_parent_session(
    tmp_path: Path, agent_home: Path
) -> None:
    source, ids = branched_source(tmp_path / "other-project")
    await source.aclose()
    fork = SessionManager.fork_from(session_path(source), "/home/me/target")
    path = session_path(fork)
    assert path.parent == agent_home / "sessions" / "--home-me-target--"
    lines = read_lines(path)  # written at once
    fork_context = fork.build_session_context().messages
    await fork.append_message(user("continue here"))
    await fork.aclose()

    assert count_headers(path) == 1
    assert lines[0]["parentSession"] == str(session_path(source))
    assert lines[0]["cwd"] == "/home/me/target"
    assert lines[0]["id"] != source.session_id
    assert lines[1:] == read_lines(session_path(source))[1:]
    assert fork_context == source.build_session_context().messages
    # The source ends in a label entry: the copy resumes at the conversation step it labels.
    with SessionManager.open(session_path(source)) as reopened:
        resumed_at = reopened.leaf_id
    assert read_lines(path)[-1]["parentId"] == resumed_at
    assert ids


def make_session(folder: Path, cwd: str, texts: list[str], first_ms: int, name: str | None = None) -> Path:
    """A session file whose message timestamps start at ``first_ms``, one second apart."""
    lines: list[Mapping[str, Any]] = [
        header(cwd=cwd, session_id=f"00000000-0000-4000-8000-{first_ms % 10**12:012d}")
    ]
    parent: str | None = None
    for i, text in enumerate(texts):
        entry_id = f"{i + 1:08x}"
        stamp = first_ms + 1000 * i
        message = user(text, stamp) if i % 2 == 0 else assistant(text, ts=stamp)
        lines.append(message_entry(entry_id, parent, i, message))
        parent = entry_id
    if name is not None:
        lines.append(
            {
                "type": "session_info",
                "id": "0000ffff",
                "parentId": parent,
                "timestamp": "2024-12-03T15:00:00.000Z",
                "name": name,
            }
        )
    path = folder / f"session-{first_ms}.jsonl"
    write_jsonl(path, lines)
    return path


def test_list_sessions_reports_metadata_most_recent_first_and_skips_non_sessions(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "--p--"
    older = make_session(folder, "/p", ["fix the bug", "done"], BASE_MS)
    newer = make_session(folder, "/p", ["write docs", "ok", "more", "sure"], BASE_MS + 3_600_000, name="Docs")
    (folder / "notes.jsonl").write_text("just some notes\n")
    (folder / "empty.jsonl").write_text("")
    (folder / "readme.txt").write_text('{"type":"session","id":"x"}\n')

    infos = list_sessions(folder)
    assert [info.path for info in infos] == [str(newer), str(older)]
    first = infos[0]
    assert first.id == "00000000-0000-4000-8000-" + f"{(BASE_MS + 3_600_000) % 10**12:012d}"
    assert first.cwd == "/p"
    assert first.name == "Docs"
    assert first.created == "2024-12-03T14:00:00.000Z"
    assert first.modified == "2024-12-03T15:00:03.000Z"  # the last message's time
    assert first.messageCount == 4
    assert first.firstMessage == "write docs"
    assert infos[1].name is None
    assert infos[1].messageCount == 2
    assert infos[1].firstMessage == "fix the bug"
    assert infos[1].modified == "2024-12-03T14:00:01.000Z"


def test_list_all_sessions_covers_every_cwd_folder_most_recent_first(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    a = make_session(root / "--a--", "/a", ["a"], BASE_MS + 1000)
    b = make_session(root / "--b--", "/b", ["b"], BASE_MS + 5000)
    c = make_session(root / "--a--", "/a", ["c"], BASE_MS + 3000)
    (root / "stray.jsonl").write_text("not in a cwd folder\n")
    infos = list_all_sessions(root)
    assert [info.path for info in infos] == [str(b), str(c), str(a)]
    assert [info.cwd for info in infos] == ["/b", "/a", "/a"]


def test_listing_sessions_written_by_the_store(agent_home: Path) -> None:
    manager = SessionManager.create("/proj")
    manager.append_message(user("hello there"))
    manager.append_message(assistant("hi"))
    manager.append_session_info("Greeting")
    manager.close()
    [info] = list_sessions(agent_home / "sessions" / "--proj--")
    assert info.path == str(session_path(manager))
    assert info.id == manager.session_id
    assert info.name == "Greeting"
    assert info.messageCount == 2
    assert info.firstMessage == "hello there"
    assert [i.path for i in list_all_sessions(agent_home / "sessions")] == [info.path]


def test_continue_recent_opens_the_most_recently_modified_session(agent_home: Path) -> None:
    folder = agent_home / "sessions" / "--proj--"
    first = make_session(folder, "/proj", ["first", "r"], BASE_MS)
    second = make_session(folder, "/proj", ["second", "r"], BASE_MS + 10_000)
    (folder / "zzz-not-a-session.jsonl").write_text("garbage\n")
    os.utime(first, (2_000_000_000, 2_000_000_000))
    os.utime(second, (1_000_000_000, 1_000_000_000))
    with SessionManager.continue_recent("/proj") as manager:
        assert manager.session_file == first
        assert summarize(manager.build_session_context().messages)[0] == ("user", "first")


def test_continue_recent_without_sessions_starts_a_new_one(agent_home: Path) -> None:
    with SessionManager.continue_recent("/fresh") as manager:
        assert manager.entries == []
        assert session_path(manager).parent == agent_home / "sessions" / "--fresh--"
        assert not session_path(manager).exists()


def test_branched_session_of_an_unknown_entry_raises_and_creates_nothing(tmp_path: Path) -> None:
    source, _ids = branched_source(tmp_path)
    with source, pytest.raises(EntryNotFoundError):
        source.create_branched_session("ffffffff")
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".jsonl"] == [session_path(source).name]


def test_branched_session_of_an_in_memory_session_stays_in_memory() -> None:
    manager = SessionManager.in_memory("/p")
    u1 = eid(manager.append_message(user("u1")))
    a1 = eid(manager.append_message(assistant("a1")))
    manager.append_label_change(u1, "kept")
    manager.append_message(user("u2"))
    branched = manager.create_branched_session(a1)
    assert branched.session_file is None
    assert branched.labels == {u1: "kept"}
    assert context_of(branched) == [("user", "u1"), ("assistant", "a1")]


@pytest.mark.anyio
async def test_a_session_created_at_a_pi_style_name_takes_the_id_the_name_carries(tmp_path: Path) -> None:
    named = tmp_path / "2026-01-02T03-04-05-678Z_0b9e5c1e-6a52-4d0c-9a53-3f0f8f2b1c77.jsonl"
    manager = SessionManager.open(named, cwd="/work/x")
    assert manager.session_id == "0b9e5c1e-6a52-4d0c-9a53-3f0f8f2b1c77"
    await manager.aclose()
    other = SessionManager.open(tmp_path / "notes.jsonl", cwd="/work/x")  # any other name: a fresh id
    assert other.session_id != "0b9e5c1e-6a52-4d0c-9a53-3f0f8f2b1c77"
    assert len(other.session_id) == 36
    await other.aclose()
