"""A session file is written only by its own write chain, and only regular files are sessions.

* the one-writer lock follows the file itself: a symlink, a hard link or another spelling of a
  session that another process holds is refused with that process's pid;
* the chain notices, before it writes, that the file at its path was replaced, truncated, grown
  by someone else or removed, and latches a clear error instead of appending where nobody reads;
* a FIFO, a device, a socket or a directory is refused with the reason, without blocking.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from session_testlib import assistant, read_lines, user, written_session

from child_python import run_python
from rpc_agent.store import InvalidSessionFileError, PersistenceError, SessionLockedError, SessionManager

# Opens the session, says so, and holds it until its stdin closes.
HOLDER = """
import sys
from rpc_agent.store import SessionManager
manager = SessionManager.open(sys.argv[1])
print("held", flush=True)
sys.stdin.read()
manager.close()
"""


@pytest.fixture(scope="module")
def held_by_another_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """A written session and the pid of a second process that holds it open: one holder for
    the module, whose tests only try to open the file under other names and leave it as it was."""
    path = written_session(tmp_path_factory.mktemp("held") / "sessions")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        yield path, holder.pid
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
        assert holder.stdout is not None
        holder.stdout.close()


@pytest.mark.parametrize(
    ("name", "make_link"),
    [
        ("alias.jsonl", lambda path, link: link.symlink_to(path)),
        ("hard.jsonl", lambda path, link: os.link(path, link)),
    ],
    ids=["symlink", "hard-link"],
)
def test_a_link_to_a_held_session_is_locked_by_the_holders_pid(
    tmp_path: Path,
    held_by_another_process: tuple[Path, int],
    name: str,
    make_link: Callable[[Path, Path], None],
) -> None:
    path, pid = held_by_another_process
    link = tmp_path / "elsewhere" / name
    link.parent.mkdir()
    make_link(path, link)
    before = path.read_bytes()

    with pytest.raises(SessionLockedError) as caught:
        SessionManager.open(link)
    assert caught.value.pid == pid
    assert f"is locked by pid {pid}" in str(caught.value)
    assert path.read_bytes() == before
    # The link got no lock of its own: nothing is left behind that would keep it from being
    # opened once the holder is gone.
    assert not (link.parent / f"{name}.lock").exists()


def test_a_relative_spelling_of_a_held_session_is_locked(
    tmp_path: Path, held_by_another_process: tuple[Path, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, pid = held_by_another_process
    monkeypatch.chdir(path.parent.parent)
    with pytest.raises(SessionLockedError) as caught:
        SessionManager.open(Path("sessions/../sessions") / path.name)
    assert caught.value.pid == pid


def test_a_hard_link_opens_once_the_holder_is_gone(tmp_path: Path) -> None:
    path = written_session(tmp_path / "sessions")
    link = tmp_path / "hard.jsonl"
    os.link(path, link)
    with SessionManager.open(link) as manager:
        manager.append_message(user("through the link"))
    assert [line.get("message", {}).get("content") for line in read_lines(path)][-1] == "through the link"


# --- the chain checks its file before it writes ------------------------------------------------


def opened(tmp_path: Path) -> tuple[SessionManager, Path]:
    path = written_session(tmp_path)
    manager = SessionManager.open(path)
    return manager, path


async def expect_changed(manager: SessionManager, path: Path, what: str) -> None:
    with pytest.raises(PersistenceError) as caught:
        await manager.append_message(user("would be lost"))
    assert type(caught.value.cause).__name__ == "SessionFileChangedError"
    assert what in str(caught.value)
    assert str(path) in str(caught.value)
    # Latched: every later append is refused too.
    with pytest.raises(PersistenceError):
        manager.append_message(user("later"))


def replace_with_a_page(path: Path) -> bytes | None:
    page = path.with_name("page.html")
    page.write_bytes(b"<html>not a session</html>")
    os.replace(page, path)
    return b"<html>not a session</html>"


def replace_with_a_copy(path: Path) -> bytes | None:
    """Same bytes, another file: not the one the session read."""
    original = path.read_bytes()
    copy = path.with_name("copy.jsonl")
    copy.write_bytes(original)
    os.replace(copy, path)
    return original


def truncate(path: Path) -> bytes | None:
    os.truncate(path, 0)
    return b""  # nothing appended at offset 0 without a header


def append_a_line(path: Path) -> bytes | None:
    with path.open("ab") as other:
        other.write(b'{"type":"custom","id":"ffffffff","parentId":null,"timestamp":"x","customType":"o"}\n')
    return path.read_bytes()


def remove(path: Path) -> bytes | None:
    path.unlink()
    return None


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("change", "after_an_append", "what"),
    [
        (replace_with_a_page, True, "was replaced by another file"),
        (replace_with_a_copy, False, "was replaced by another file"),
        (truncate, True, "was truncated"),
        (append_a_line, True, "was appended to"),
        (remove, True, "was removed"),
    ],
    ids=["replaced", "replaced-before-the-first-append", "truncated", "appended-to", "removed"],
)
async def test_a_changed_file_latches_an_error_and_is_left_alone(
    tmp_path: Path, change: Callable[[Path], bytes | None], after_an_append: bool, what: str
) -> None:
    manager, path = opened(tmp_path)
    if after_an_append:
        await manager.append_message(user("u2"))  # the chain has the file open now
    left = change(path)  # what the other party left at the path (None: nothing)

    await expect_changed(manager, path, what)
    assert (path.read_bytes() if path.exists() else None) == left
    with pytest.raises(PersistenceError):
        await manager.aclose()


@pytest.mark.anyio
async def test_a_new_session_whose_file_appeared_meanwhile_is_not_appended_to(tmp_path: Path) -> None:
    manager = SessionManager.create("/p", tmp_path)
    path = manager.session_file
    assert path is not None
    path.write_bytes(b"somebody else's data\n")
    manager.append_message(user("u1"))

    with pytest.raises(PersistenceError) as caught:
        await manager.append_message(assistant("a1"))  # the first write of the session
    assert "appeared with content" in str(caught.value)
    assert path.read_bytes() == b"somebody else's data\n"
    with pytest.raises(PersistenceError):
        await manager.aclose()


@pytest.mark.anyio
async def test_untouched_files_keep_appending_across_reopen(tmp_path: Path) -> None:
    manager, path = opened(tmp_path)
    for n in range(3):
        await manager.append_message(user(f"u{n}"))
    await manager.aclose()
    with SessionManager.open(path) as again:
        await again.append_message(user("after reopen"))
    assert len(read_lines(path)) == 1 + 2 + 3 + 1


# --- only regular files are sessions ------------------------------------------------------------


OPEN = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from rpc_agent.store import SessionManager
for path in sys.argv[1:]:
    try:
        SessionManager.open(path)
    except Exception as error:
        print(path, type(error).__name__, error, flush=True)
    else:
        print(path, 'opened', flush=True)
"""
"""SessionManager.open of each path in a child process, so that a hang or a memory run-away
cannot take the test run with it (the child gets 20 s and an address-space limit); a line
for each path, in order: the path, then ``opened`` or the error."""


class Refusals(NamedTuple):
    folder: Path
    told: dict[str, str]
    """What the child said for each path, by name."""


@pytest.fixture(scope="module")
def opened_in_a_child(tmp_path_factory: pytest.TempPathFactory) -> Refusals:
    """What opening a FIFO, ``/dev/zero`` and a symlink to a FIFO gave: one child for the three
    (each one a path that must be refused at once)."""
    folder = tmp_path_factory.mktemp("not-regular")
    os.mkfifo(folder / "pipe.jsonl")
    os.mkfifo(folder / "pipe")
    (folder / "link.jsonl").symlink_to(folder / "pipe")
    paths = {"a FIFO": folder / "pipe.jsonl", "/dev/zero": Path("/dev/zero"), "a link": folder / "link.jsonl"}
    done = run_python(OPEN, *paths.values(), timeout=20)
    assert done.returncode == 0, done
    lines = done.stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == [str(path) for path in paths.values()], done
    return Refusals(folder, {name: line.split(" ", 1)[1] for name, line in zip(paths, lines, strict=True)})


def test_a_fifo_is_refused_without_blocking(opened_in_a_child: Refusals) -> None:
    told = opened_in_a_child.told["a FIFO"]
    assert told.startswith("InvalidSessionFileError "), told
    assert "FIFO" in told
    assert not (opened_in_a_child.folder / "pipe.jsonl.lock").exists()


def test_dev_zero_is_refused(opened_in_a_child: Refusals) -> None:
    told = opened_in_a_child.told["/dev/zero"]
    assert told.startswith("InvalidSessionFileError "), told
    assert "character device" in told
    assert not Path("/dev/zero.lock").exists()


def test_a_directory_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "dir.jsonl"
    folder.mkdir()
    with pytest.raises(InvalidSessionFileError) as caught:
        SessionManager.open(folder)
    assert "directory" in str(caught.value)


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sock.jsonl"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(InvalidSessionFileError) as caught:
            SessionManager.open(path)
    assert "socket" in str(caught.value)


def test_a_symlink_to_a_fifo_is_refused(opened_in_a_child: Refusals) -> None:
    told = opened_in_a_child.told["a link"]
    assert told.startswith("InvalidSessionFileError "), told
    assert "FIFO" in told


def test_listing_skips_a_fifo_without_blocking(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    path = written_session(folder)
    os.mkfifo(folder / "2024-01-01T00-00-00-000Z_0c0ffee0-0000-4000-8000-000000000000.jsonl")
    code = (
        "import sys\nfrom pathlib import Path\nfrom rpc_agent.store import files, listing\n"
        "print([Path(i.path).name for i in listing.list_sessions(Path(sys.argv[1]))])\n"
        "print(files.read_header(Path(sys.argv[2])))\n"
    )
    fifo = folder / "2024-01-01T00-00-00-000Z_0c0ffee0-0000-4000-8000-000000000000.jsonl"
    done = run_python(code, folder, fifo, timeout=20)
    assert done.returncode == 0, done
    assert done.stdout.splitlines() == [repr([path.name]), "None"]
