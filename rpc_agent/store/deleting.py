"""Deleting a session: its file, the blobs only it used, and (through the caller) its checkpoints.

One function serves the JSON-RPC ``delete_session`` and ACP's ``session/delete``. What it
refuses, before anything is removed:

- a path that is not a session file of this agent's store (a ``.jsonl`` file with a session
  header, under the home's sessions folder or the server's own session folder): a client
  names a file, and deleting whatever it names would make the agent a ``rm`` for any path;
- the session the caller is living in (the front says which);
- a session another process has open: its lock is taken for the deletion, so that nobody
  opens it halfway, and a writer that holds it keeps its file.

Blobs are shared by every session that uses the same blob folder (content-addressed: one
pasted screenshot in two sessions is one file). A blob the deleted session referenced goes
only when no other session file in that store references it, and when it was not stored or
reused in the last ``grace_seconds``: another process may have just stored it for a line it
has not written yet (``BlobStore.put`` refreshes the mtime of a blob it reuses for this).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from rpc_agent.errors import InvalidSessionFileError, LiveSessionError, SessionNotFoundError
from rpc_agent.regular_files import check_session_path, read_regular
from rpc_agent.store import files
from rpc_agent.store.listing import header_of
from rpc_agent.store.locking import SessionLock
from rpc_agent.store.opening import blob_folder

BLOB_GRACE_SECONDS = 600.0
"""A blob stored or reused this recently is kept (see the module doc)."""

_BLOB_REF = re.compile(rb"blob:sha256:([0-9a-f]{64})")


@dataclass(frozen=True, slots=True)
class DeletedSession:
    path: Path
    session_id: str
    blobs_removed: int


def session_stores(home: Path, session_dir: Path | None) -> list[Path]:
    """The folders whose session files a client may delete: the home's sessions folder (with
    every cwd's folder in it) and the server's own ``--session-dir``."""
    stores = [files.sessions_root(home)]
    if session_dir is not None:
        stores.append(session_dir)
    return stores


def check_deletable(path: Path, stores: Iterable[Path], live: Iterable[Path] = ()) -> tuple[Path, str]:
    """The absolute path and session id of a session file in one of ``stores`` and not
    ``live``, else the error that says why it cannot be deleted."""
    absolute = Path(os.path.abspath(path))
    if absolute.suffix != ".jsonl":
        raise InvalidSessionFileError(absolute, "a session file's name ends in .jsonl")
    real = Path(os.path.realpath(absolute))
    if not any(real.is_relative_to(os.path.realpath(store)) for store in stores):
        raise InvalidSessionFileError(
            absolute, "only a session file of this agent's session folders can be deleted"
        )
    if any(_same_file(absolute, other) for other in live):
        raise LiveSessionError(absolute)
    if not check_session_path(absolute):
        raise SessionNotFoundError(absolute)
    header = files.read_header(absolute)
    if header is None:
        raise InvalidSessionFileError(absolute, "its first line is not a session header")
    return absolute, str(header["id"])


def delete_session(
    path: Path,
    *,
    home: Path,
    session_dir: Path | None = None,
    live: Iterable[Path] = (),
    free_checkpoints: Callable[[Path], None] | None = None,
    grace_seconds: float = BLOB_GRACE_SECONDS,
) -> DeletedSession:
    """Delete the session file at ``path`` and what only it used (see the module doc).

    ``live``: the session files the caller has open itself (refused with LiveSessionError).
    ``free_checkpoints``: frees the deleted file's checkpoints, given its path; the
    checkpoints sit above this layer (they read session files), so the caller hands it in.
    """
    absolute, session_id = check_deletable(path, session_stores(home, session_dir), live)
    lock = SessionLock(absolute)
    lock.acquire()  # SessionLockedError when another process has it open
    try:
        data = read_regular(absolute)
        if data is None or header_of(data) is None:
            raise SessionNotFoundError(absolute)
        referenced = set(_BLOB_REF.findall(data))
        os.unlink(absolute)
        files.fsync_dir(absolute.parent)
    finally:
        lock.release()
    if free_checkpoints is not None:
        free_checkpoints(absolute)
    blobs = _remove_unused_blobs(referenced, absolute, home, grace_seconds)
    return DeletedSession(absolute, session_id, blobs)


def _same_file(one: Path, other: Path) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return os.path.abspath(one) == os.path.abspath(other)


def _remove_unused_blobs(referenced: set[bytes], deleted: Path, home: Path, grace_seconds: float) -> int:
    if not referenced:
        return 0
    folder = blob_folder(deleted.parent, home)
    # The sessions sharing that blob folder: every folder of the sessions root, or the
    # custom session folder alone (see ``blob_folder``).
    root = files.sessions_root(home).absolute()
    sharing = root if deleted.parent.is_relative_to(root) else deleted.parent
    unused = set(referenced)
    for other in sharing.rglob("*.jsonl"):
        if not unused:
            break
        with contextlib.suppress(OSError):
            data = other.read_bytes()
            unused = {digest for digest in unused if digest not in data}
    removed = 0
    cutoff = time.time() - grace_seconds
    for digest in unused:
        blob = folder / digest.decode("ascii")
        try:
            if blob.stat().st_mtime > cutoff:
                continue
            blob.unlink()
        except OSError:
            continue
        removed += 1
    return removed
