"""Deferred first write, durable appends, group commit and the latched write error."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from session_testlib import (
    assistant,
    count_headers,
    eid,
    first_exchange,
    message_entry,
    read_lines,
    session_path,
    user,
    write_session,
)

from rpc_agent.store import PersistenceError, SessionManager


def on_disk(manager: SessionManager) -> bool:
    return manager.is_on_disk


@pytest.mark.anyio
async def test_nothing_is_written_until_an_assistant_message_exists(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path)
    path = session_path(manager)
    u1 = await manager.append_message(user("u1"))
    await manager.append_thinking_level_change("high")
    await manager.append_model_change("anthropic", "claude-x")
    await manager.append_custom_entry("ext", {"n": 1})
    assert not path.exists()
    assert on_disk(manager) is False
    chain = manager.write_chain
    assert chain is not None
    assert chain.fsyncs == 0

    a1 = await manager.append_message(assistant("a1"))
    assert on_disk(manager) is True
    assert chain.fsyncs == 1  # header and every entry so far went out in one batch
    lines = read_lines(path)
    assert [line["type"] for line in lines] == [
        "session",
        "message",
        "thinking_level_change",
        "model_change",
        "custom",
        "message",
    ]
    assert lines[0] == manager.header
    assert lines[1:] == manager.entries
    assert lines[1]["id"] == u1
    assert lines[-1]["id"] == a1

    u2 = await manager.append_message(user("u2"))
    lines = read_lines(path)
    assert len(lines) == 7
    assert lines[-1]["id"] == u2
    assert lines[-1]["parentId"] == a1
    assert count_headers(path) == 1
    await manager.aclose()


def test_a_session_closed_before_any_answer_leaves_no_file(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path)
    manager.append_message(user("never answered"))
    manager.close()
    assert not session_path(manager).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.anyio
async def test_reopened_file_gets_incremental_appends_and_keeps_one_header(tmp_path: Path) -> None:
    manager = await first_exchange(tmp_path)
    await manager.aclose()
    path = session_path(manager)

    for round_ in range(2):
        again = SessionManager.open(path)
        await again.append_message(user(f"more {round_}"))
        await again.append_message(assistant(f"reply {round_}"))
        await again.aclose()
    lines = read_lines(path)
    assert count_headers(path) == 1
    assert lines[0]["type"] == "session"
    assert len(lines) == 7
    assert [line["parentId"] for line in lines[2:]] == [line["id"] for line in lines[1:-1]]


@pytest.mark.anyio
async def test_reopened_file_without_assistant_messages_does_not_duplicate_the_header(
    tmp_path: Path,
) -> None:
    # pi duplicates the header in this case (a known bug); we must not.
    path = tmp_path / "only-user.jsonl"
    write_session(path, message_entry("00000001", None, 1, user("u1")))

    again = SessionManager.open(path)
    await again.append_message(user("u2"))
    await again.append_message(assistant("a2"))
    await again.aclose()
    assert count_headers(path) == 1
    assert [line["type"] for line in read_lines(path)] == ["session", "message", "message", "message"]


def last_line(path: Path) -> bytes:
    with open(path, "rb") as handle:  # a separate open, not the writer's descriptor
        return handle.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]


@pytest.mark.anyio
async def test_awaited_append_is_in_the_file_when_it_returns(tmp_path: Path) -> None:
    manager = await first_exchange(tmp_path)
    path = session_path(manager)
    for i in range(5):
        entry_id = await manager.append_custom_message_entry("ext", f"note {i}")
        last = last_line(path)
        assert entry_id is not None
        assert entry_id.encode() in last
        assert f"note {i}".encode() in last
    await manager.aclose()


def file_ids(path: Path) -> list[str]:
    return [line["id"] for line in read_lines(path)[1:]]


@pytest.mark.anyio
async def test_concurrent_appends_all_land_in_call_order_with_shared_fsyncs(tmp_path: Path) -> None:
    manager = await first_exchange(tmp_path)
    path = session_path(manager)
    chain = manager.write_chain
    assert chain is not None
    fsyncs_before = chain.fsyncs
    call_order: list[str] = []
    acknowledged: list[str] = []

    async def appender(n: int) -> None:
        pending = manager.append_custom_message_entry("ext", f"line {n}")
        call_order.append(eid(pending))
        entry_id = await pending
        assert entry_id is not None
        # Acknowledged only once fsynced: the line is already in the file.
        assert entry_id in file_ids(path)
        acknowledged.append(entry_id)

    async with anyio.create_task_group() as group:
        for n in range(64):
            group.start_soon(appender, n)

    assert len(call_order) == 64
    assert sorted(acknowledged) == sorted(call_order)
    assert file_ids(path)[2:] == call_order
    assert [line["parentId"] for line in read_lines(path)[3:]] == file_ids(path)[1:-1]
    fsyncs = chain.fsyncs - fsyncs_before
    assert 1 <= fsyncs < 64
    await manager.aclose()


def replace_descriptor_with_read_only(manager: SessionManager) -> None:
    """Make every later write fail with EBADF (running as root, chmod would not stop us)."""
    chain = manager.write_chain
    assert chain is not None
    assert chain._fd is not None
    os.close(chain._fd)
    chain._fd = os.open(session_path(manager), os.O_RDONLY)


@pytest.mark.anyio
async def test_write_error_is_latched_with_the_path_and_raised_by_every_later_append(
    tmp_path: Path,
) -> None:
    manager = await first_exchange(tmp_path)
    path = session_path(manager)
    replace_descriptor_with_read_only(manager)
    on_disk = path.read_bytes()

    with pytest.raises(PersistenceError) as caught:
        await manager.append_message(user("lost?"))
    assert caught.value.path == str(path)
    assert str(path) in str(caught.value)
    assert isinstance(caught.value.cause, OSError)

    count = len(manager.entries)
    with pytest.raises(PersistenceError):
        manager.append_message(user("after the error"))
    with pytest.raises(PersistenceError):
        manager.append_label_change(manager.entries[0]["id"], "x")
    with pytest.raises(PersistenceError):
        await manager.flush()
    assert len(manager.entries) == count  # refused appends did not go into memory either
    assert path.read_bytes() == on_disk  # nothing written after the failure
    with pytest.raises(PersistenceError):
        await manager.aclose()
    assert not Path(str(path) + ".lock").exists()


@pytest.mark.anyio
async def test_every_waiter_of_a_failed_batch_gets_the_error(tmp_path: Path) -> None:
    manager = await first_exchange(tmp_path)
    replace_descriptor_with_read_only(manager)
    outcomes: list[str] = []

    async def appender(n: int) -> None:
        try:
            await manager.append_custom_entry("ext", {"n": n})
        except PersistenceError:
            outcomes.append("error")
        else:
            outcomes.append("acknowledged")

    async with anyio.create_task_group() as group:
        for n in range(8):
            group.start_soon(appender, n)
    assert outcomes == ["error"] * 8
    with pytest.raises(PersistenceError):
        await manager.aclose()


@pytest.mark.anyio
async def test_failed_first_write_is_latched(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path)
    path = session_path(manager)
    path.mkdir()  # the session file's name is taken by a folder: the first write must fail
    await manager.append_message(user("u1"))
    with pytest.raises(PersistenceError) as caught:
        await manager.append_message(assistant("a1"))
    assert caught.value.path == str(path)
    with pytest.raises(PersistenceError):
        manager.append_message(user("u2"))
    assert path.is_dir()
    assert list(path.iterdir()) == []
    with pytest.raises(PersistenceError):
        await manager.aclose()


def test_close_writes_appends_that_were_never_awaited(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path)
    manager.append_message(user("u1"))
    manager.append_message(assistant("a1"))
    manager.append_message(user("u2"))
    manager.close()
    assert [line.get("message", {}).get("content") for line in read_lines(session_path(manager))][1:2] == [
        "u1"
    ]
    assert len(read_lines(session_path(manager))) == 4


def test_in_memory_session_never_touches_the_disk(
    tmp_path: Path, agent_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    manager = SessionManager.in_memory(str(tmp_path))
    manager.append_message(user("u1"))
    manager.append_message(assistant("a1"))
    manager.close()
    assert not manager.is_persisted
    assert manager.session_file is None
    assert list(tmp_path.iterdir()) == []
    assert not agent_home.exists()


@pytest.mark.anyio
async def test_a_cancelled_append_still_reaches_the_file_and_keeps_the_chain(tmp_path: Path) -> None:
    manager = SessionManager.create("/w", tmp_path)
    await manager.append_message(user("hi"))
    await manager.append_message(assistant("hello"))
    with anyio.CancelScope() as scope:
        scope.cancel()
        cancelled = manager.append_message(user("sent while cancelled"))
        await cancelled  # its waiter leads the batch and is cancelled at its first await
    await manager.append_message(user("after"))
    await manager.aclose()
    assert manager.session_file is not None
    ids = [line.get("id") for line in read_lines(manager.session_file)]
    assert cancelled.id in ids
    with SessionManager.open(manager.session_file) as reopened:
        texts = [m["content"] for m in reopened.build_session_context().messages]
    assert texts[0] == "hi"
    assert texts[-2:] == ["sent while cancelled", "after"]


@pytest.mark.anyio
async def test_appenders_that_keep_appending_share_one_fsync_per_round(tmp_path: Path) -> None:
    """The batch that follows a fsync waits for the appenders it woke, not only the first one."""
    manager = await first_exchange(tmp_path)
    chain = manager.write_chain
    assert chain is not None
    fsyncs_before = chain.fsyncs
    rounds = 5

    async def appender(n: int) -> None:
        for r in range(rounds):
            await manager.append_custom_message_entry("ext", f"line {n}.{r}")

    async with anyio.create_task_group() as group:
        for n in range(64):
            group.start_soon(appender, n)

    assert len(file_ids(session_path(manager))) == 2 + 64 * rounds
    assert chain.fsyncs - fsyncs_before <= rounds + 1
    await manager.aclose()
