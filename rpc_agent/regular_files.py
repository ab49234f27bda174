"""Only a regular file can be a session: the check, in a module light enough for the command
to run before it loads the agent (a mistyped ``--session`` is refused at once), and the opens
the store makes, which check again what they opened."""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path

from rpc_agent.errors import InvalidSessionFileError


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, in the words an error message uses."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def not_a_session(path: Path | str, mode: int) -> InvalidSessionFileError:
    return InvalidSessionFileError(path, f"it is {file_kind(mode)}, and only a regular file can be a session")


def check_session_path(path: Path) -> bool:
    """True when ``path`` is a regular file, False when nothing is there (a new session).

    Anything else (a FIFO, a device, a socket, a directory) is refused before it is opened:
    opening a FIFO for reading waits for a writer forever, and ``/dev/zero`` never ends.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        raise InvalidSessionFileError(path, "a parent of the path is not a directory") from None
    if not stat.S_ISREG(mode):
        raise not_a_session(path, mode)
    return True


def open_regular(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` that never blocks on a FIFO and only hands out regular files.

    ``O_NONBLOCK`` makes the open of a FIFO return at once (the check before it can race
    with somebody swapping the file); ``fstat`` of what was opened decides. The flag is
    cleared again, so the descriptor behaves as a plain one.
    """
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise not_a_session(path, info.st_mode)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path) -> bytes | None:
    """The bytes of a regular file, None when it does not exist (anything else is refused)."""
    if not check_session_path(path):
        return None
    try:
        fd = open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()
