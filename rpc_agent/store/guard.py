"""What only a session's write chain may write: the rule that the tools and exports check."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

import orjson

from rpc_agent.errors import InvalidSessionFileError, ProtectedPathError
from rpc_agent.regular_files import open_regular
from rpc_agent.store.files import agent_home, is_header, sessions_root


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: the same resolved path, or the same device and inode."""
    if Path(os.path.realpath(a)) == Path(os.path.realpath(b)):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def store_folders(home: Path | None = None, extra: Iterable[Path | None] = ()) -> tuple[Path, ...]:
    """The folders that hold session data: ``<home>/sessions``, ``<home>/blobs`` and ``extra``."""
    root = home or agent_home()
    return (sessions_root(root), root / "blobs", *(folder for folder in extra if folder is not None))


def session_write_refusal(
    target: Path, *, live: Path | None = None, folders: Iterable[Path] = ()
) -> str | None:
    """Why ``target`` must not be written by anything but a session's write chain, or None.

    Refused: the live session file under any name (the path itself, a symlink to it, a hard
    link, a relative spelling) and its lock; anything inside ``folders`` (the session store);
    and any existing file whose first line is a session header, wherever it lives (another
    session of this server, or of the pi coding agent, that may be open elsewhere). The
    path is resolved as a write would follow it: symlinks to their target.
    """
    resolved = Path(os.path.realpath(target))
    try:
        info: os.stat_result | None = os.stat(resolved)
    except OSError:
        info = None
    if live is not None:
        live_resolved = Path(os.path.realpath(live))
        if resolved == live_resolved:
            return "it is this session's own file; only the session itself appends to it"
        if resolved == live_resolved.with_name(live_resolved.name + ".lock"):
            return "it is the lock of this session's file"
        if info is not None:
            with contextlib.suppress(OSError):
                live_info = os.stat(live_resolved)
                if (live_info.st_dev, live_info.st_ino) == (info.st_dev, info.st_ino):
                    return "it is a hard link to this session's own file"
    for folder in folders:
        folder_resolved = Path(os.path.realpath(folder))
        if resolved == folder_resolved or resolved.is_relative_to(folder_resolved):
            return f"it is inside the session store {folder_resolved}"
    if info is not None and stat.S_ISREG(info.st_mode) and _starts_with_header(resolved):
        return "it is a session file (its first line is a session header)"
    return None


def _starts_with_header(path: Path, limit: int = 65536) -> bool:
    """Whether the file's first line is a session header, reading at most ``limit`` bytes
    (a header is a short line; a big file without newlines is not read to its end)."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except (OSError, InvalidSessionFileError):
        return False
    with os.fdopen(fd, "rb") as handle:
        head = handle.read(limit)
    if not head.startswith(b"{"):
        return False
    end = head.find(b"\n")
    if end < 0 and len(head) == limit:
        return False
    try:
        return is_header(orjson.loads(head if end < 0 else head[:end]))
    except orjson.JSONDecodeError:
        return False


def check_write_target(target: Path, *, live: Path | None = None, folders: Iterable[Path] = ()) -> None:
    """Raise ProtectedPathError when ``session_write_refusal`` refuses ``target``."""
    reason = session_write_refusal(target, live=live, folders=folders)
    if reason is not None:
        raise ProtectedPathError(target, reason)
