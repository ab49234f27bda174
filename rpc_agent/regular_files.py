"""Only a regular file can be a session: the check, in a module light enough for the command
to run before it loads the agent (a mistyped ``--session`` is refused at once), and that the
store runs again before every open."""

from __future__ import annotations

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
