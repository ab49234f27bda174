"""Deleting a session: what it removes (the file, blobs nobody else uses) and what it refuses."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from session_testlib import assistant, blocks_of, user

from child_python import run_python
from rpc_agent.errors import InvalidSessionFileError, LiveSessionError, SessionNotFoundError
from rpc_agent.protocol.shapes import BlockDict, MessageDict
from rpc_agent.store import SessionManager, build_session_context
from rpc_agent.store.deleting import delete_session

JsonDict = dict[str, object]

PICTURE = base64.b64encode(bytes(range(256)) * 8).decode()
"""Big enough to go to the blob store."""
OTHER_PICTURE = base64.b64encode(bytes(range(255, -1, -1)) * 8).decode()


def with_images(*pictures: str) -> MessageDict:
    blocks: list[BlockDict] = [{"type": "text", "text": "look"}]
    blocks += [{"type": "image", "data": data, "mimeType": "image/png"} for data in pictures]
    return {**user("x"), "content": blocks}


def session(cwd: str, *pictures: str, home: Path) -> Path:
    manager = SessionManager.create(cwd, home=home)
    manager.append_message(with_images(*pictures))
    manager.append_message(assistant("seen"))
    manager.close()
    assert manager.session_file is not None
    return manager.session_file


def blobs(home: Path) -> list[str]:
    folder = home / "blobs"
    return (
        sorted(path.name for path in folder.iterdir() if not path.name.startswith("."))
        if folder.is_dir()
        else []
    )


def test_deletes_the_file_and_the_blobs_only_it_used_keeping_shared_ones(tmp_path: Path) -> None:
    home = tmp_path / "home"
    doomed = session("/a", PICTURE, OTHER_PICTURE, home=home)
    sharer = session("/b", PICTURE, home=home)  # another cwd's folder, the same blob folder
    plain = session("/a", home=home)
    assert len(blobs(home)) == 2

    deleted = delete_session(doomed, home=home, grace_seconds=0)
    assert not doomed.exists()
    assert not doomed.with_name(doomed.name + ".lock").exists()
    assert deleted.blobs_removed == 1
    [kept] = blobs(home)
    assert kept.encode() in sharer.read_bytes()
    # The one left still opens with its image.
    reopened = SessionManager.open(sharer, home=home)
    [first, _] = build_session_context(reopened.entries, reopened.leaf_id).messages
    [image] = [block for block in blocks_of(first) if block["type"] == "image"]
    assert image["data"] == PICTURE
    reopened.close()

    assert delete_session(sharer, home=home, grace_seconds=0).blobs_removed == 1
    assert blobs(home) == []
    assert delete_session(plain, home=home).blobs_removed == 0


def test_a_blob_stored_or_reused_within_the_grace_time_is_kept(tmp_path: Path) -> None:
    home = tmp_path / "home"
    doomed = session("/a", PICTURE, home=home)
    assert delete_session(doomed, home=home).blobs_removed == 0  # just written
    [blob] = blobs(home)
    os.utime(home / "blobs" / blob, (1, 1))
    again = session("/a", PICTURE, home=home)  # reuses the blob: its mtime is fresh again
    assert (home / "blobs" / blob).stat().st_mtime > 1
    assert delete_session(again, home=home).blobs_removed == 0
    os.utime(home / "blobs" / blob, (1, 1))
    # No session refers to it any more, but only a deletion that referenced it collects it.
    assert blobs(home) == [blob]


def test_a_custom_session_folder_keeps_its_blobs_to_itself(tmp_path: Path) -> None:
    home = tmp_path / "home"
    custom = tmp_path / "custom"
    manager = SessionManager.create("/a", custom, home=home)
    manager.append_message(with_images(PICTURE))
    manager.append_message(assistant("seen"))
    manager.close()
    assert manager.session_file is not None
    in_home = session("/a", PICTURE, home=home)  # the same picture in the home's store
    deleted = delete_session(manager.session_file, home=home, session_dir=custom, grace_seconds=0)
    assert deleted.blobs_removed == 1
    assert not any((custom / "blobs").iterdir())
    assert len(blobs(home)) == 1
    assert in_home.exists()


@pytest.mark.anyio
async def test_refuses_the_live_session_and_one_another_process_has_open(tmp_path: Path) -> None:
    home = tmp_path / "home"
    live = SessionManager.create("/a", home=home)
    with pytest.raises(LiveSessionError, match="live session"):  # not written yet
        delete_session(live.session_file or Path(), home=home, live=[live.session_file or Path()])
    live.append_message(user("hi"))
    live.append_message(assistant("hello"))
    await live.flush()
    assert live.session_file is not None
    with pytest.raises(LiveSessionError, match="live session"):
        delete_session(live.session_file, home=home, live=[live.session_file])
    # Another process asking: this one holds the lock.
    done = run_python(
        "import sys\n"
        "from pathlib import Path\n"
        "from rpc_agent.errors import SessionLockedError\n"
        "from rpc_agent.store.deleting import delete_session\n"
        "try:\n"
        "    delete_session(Path(sys.argv[1]), home=Path(sys.argv[2]))\n"
        "except SessionLockedError as error:\n"
        "    print(f'locked {error.pid}')\n",
        live.session_file,
        home,
    )
    assert done.stdout.strip() == f"locked {os.getpid()}", done.stderr
    assert live.session_file.exists()
    live.close()
    delete_session(live.session_file, home=home)
    assert not live.session_file.exists()


def test_refuses_what_is_not_a_session_file_of_the_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    kept = session("/a", home=home)
    folder = kept.parent
    notes = folder / "notes.jsonl"
    notes.write_text('{"hello": 1}\n')
    text = folder / "readme.txt"
    text.write_text(kept.read_text())
    outside = tmp_path / "elsewhere" / kept.name
    outside.parent.mkdir()
    outside.write_bytes(kept.read_bytes())
    link = folder / "link.jsonl"
    link.symlink_to(outside)
    (folder / "dir.jsonl").mkdir()
    os.mkfifo(folder / "fifo.jsonl")

    for path, error, words in [
        (notes, InvalidSessionFileError, "session header"),
        (text, InvalidSessionFileError, ".jsonl"),
        (outside, InvalidSessionFileError, "session folders"),
        (link, InvalidSessionFileError, "session folders"),
        (folder / "dir.jsonl", InvalidSessionFileError, "directory"),
        (folder / "fifo.jsonl", InvalidSessionFileError, "FIFO"),
        (folder / "missing.jsonl", SessionNotFoundError, "not found"),
        (folder / ".." / ".." / ".." / "elsewhere" / kept.name, InvalidSessionFileError, "session folders"),
    ]:
        with pytest.raises(error, match=words):
            delete_session(path, home=home)
    assert all(p.exists() for p in (kept, notes, text, outside, folder / "dir.jsonl"))


def test_the_checkpoints_of_the_deleted_file_are_freed_by_the_callers_function(tmp_path: Path) -> None:
    home = tmp_path / "home"
    doomed = session("/a", home=home)
    freed: list[tuple[Path, bool]] = []

    def free(path: Path) -> None:
        freed.append((path, path.exists()))

    with pytest.raises(SessionNotFoundError):
        delete_session(doomed.parent / "missing.jsonl", home=home, free_checkpoints=free)
    assert freed == []  # nothing is freed for a deletion that was refused
    delete_session(doomed, home=home, free_checkpoints=free)
    assert freed == [(doomed, False)]  # once, after the file is gone
