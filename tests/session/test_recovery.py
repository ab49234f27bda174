"""Lenient about damage (torn tail, garbage lines), strict about ownership (never overwrite)."""

from __future__ import annotations

from pathlib import Path

import pytest
from session_testlib import (
    assistant,
    chain,
    context_of,
    count_headers,
    eid,
    header,
    raw_lines,
    read_lines,
    user,
    write_jsonl,
)

from rpc_agent.store import InvalidSessionFileError, SessionManager, SessionNotFoundError, list_sessions

LINES = [header(), *chain(user("u1"), assistant("a1"), user("u2"), assistant("a2"))]


def test_torn_last_line_is_dropped_reported_and_cut_off(tmp_path: Path) -> None:
    path = tmp_path / "torn.jsonl"
    data = write_jsonl(path, LINES)
    last_line_length = len(raw_lines(path)[-1]) + 1
    torn = data[: len(data) - last_line_length // 2]  # a crash in the middle of the last write
    path.write_bytes(torn)
    torn_bytes = len(torn) - (len(data) - last_line_length)

    manager = SessionManager.open(path)
    assert manager.load_report.torn_tail_bytes == torn_bytes > 0
    assert [e["id"] for e in manager.entries] == ["00000001", "00000002", "00000003"]
    assert manager.leaf_id == "00000003"
    assert path.read_bytes() == data[: len(data) - last_line_length]  # repaired on open

    new = eid(manager.append_message(assistant("a2 again")))
    manager.close()
    lines = read_lines(path)  # every line parses: the file is valid JSONL again
    assert [line.get("id") for line in lines[1:]] == ["00000001", "00000002", "00000003", new]
    assert lines[-1]["parentId"] == "00000003"


def test_garbage_line_in_the_middle_is_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "garbage.jsonl"
    data = write_jsonl(path, LINES)
    lines = data.split(b"\n")
    lines.insert(3, b'{"type":"message","id":"0000')  # line 4 of the file
    lines.insert(5, b"[1, 2, 3]")  # valid JSON but not an entry: line 6
    path.write_bytes(b"\n".join(lines))

    with SessionManager.open(path) as manager:
        assert manager.load_report.skipped == 2
        assert manager.load_report.skipped_lines == [4, 6]
        assert manager.load_report.torn_tail_bytes == 0
        assert [e["id"] for e in manager.entries] == ["00000001", "00000002", "00000003", "00000004"]
        assert context_of(manager) == [
            ("user", "u1"),
            ("assistant", "a1"),
            ("user", "u2"),
            ("assistant", "a2"),
        ]
        assert len(manager.get_tree()) == 4


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "no-newline.jsonl"
    data = write_jsonl(path, LINES)
    path.write_bytes(data[:-1])

    manager = SessionManager.open(path)
    assert manager.load_report.torn_tail_bytes == 0
    assert manager.load_report.skipped == 0
    assert manager.leaf_id == "00000004"
    assert path.read_bytes() == data  # the newline was put back
    new = eid(manager.append_message(user("u3")))
    manager.close()
    lines = read_lines(path)
    assert len(lines) == 6
    assert lines[-1]["id"] == new
    assert lines[-1]["parentId"] == "00000004"


@pytest.mark.parametrize(
    "content",
    [
        b"hello world\nthis is my diary\n",
        b'{"type":"note","text":"not a session"}\n{"type":"message"}\n',
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        b'{"type":"session","id":42}\n',
        b"just one torn line without newline",
    ],
)
def test_non_session_file_is_refused_and_left_untouched(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "not-a-session.jsonl"
    path.write_bytes(content)
    with pytest.raises(InvalidSessionFileError) as caught:
        SessionManager.open(path)
    assert caught.value.path == str(path)
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # lock released, no temp file


def test_non_session_file_cannot_be_forked_either(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b"plain text\n")
    with pytest.raises(InvalidSessionFileError):
        SessionManager.fork_from(path, "/elsewhere", tmp_path / "out")
    assert path.read_bytes() == b"plain text\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.anyio
async def test_missing_file_becomes_a_new_session_at_that_path(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "chosen-name.jsonl"
    manager = SessionManager.open(path, cwd="/my/cwd")
    assert manager.session_file == path
    assert manager.entries == []
    await manager.append_message(user("u1"))
    assert not path.exists()
    await manager.append_message(assistant("a1"))
    await manager.aclose()
    lines = read_lines(path)
    assert lines[0]["type"] == "session"
    assert lines[0]["cwd"] == "/my/cwd"
    assert lines[0]["version"] == 3
    assert [line["type"] for line in lines] == ["session", "message", "message"]


def test_missing_file_with_must_exist_raises(tmp_path: Path) -> None:
    with pytest.raises(SessionNotFoundError):
        SessionManager.open(tmp_path / "nope.jsonl", must_exist=True)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.anyio
@pytest.mark.parametrize("content", [b"", b"\n", b"  \n\n"])
async def test_empty_file_becomes_a_new_session(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    manager = SessionManager.open(path, cwd="/c")
    assert manager.entries == []
    await manager.append_message(user("u1"))
    await manager.append_message(assistant("a1"))
    await manager.aclose()
    assert count_headers(path) == 1
    assert read_lines(path)[0]["type"] == "session"  # the header is line 1
    assert [info.path for info in list_sessions(tmp_path)] == [str(path)]
    with SessionManager.open(path) as again:
        assert context_of(again) == [("user", "u1"), ("assistant", "a1")]
