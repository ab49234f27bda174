"""What a SessionManager is made of: new, opened from a file, in memory, continued, or copied.

Each constructor takes the file's lock before it reads or writes anything, and releases it
again if it fails. Opening does not pause the cyclic collector: a stub entry is a dict of
strings, which the collector does not track, so a long file adds almost nothing for it to walk
(pausing it around the load measured no difference on the 100,000-entry bench session).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from rpc_agent.errors import SessionNotFoundError
from rpc_agent.protocol.entries import CURRENT_SESSION_VERSION
from rpc_agent.protocol.shapes import EntryDict, HeaderDict
from rpc_agent.regular_files import check_session_path
from rpc_agent.store import files, listing
from rpc_agent.store.blobs import BlobStore, restore_blobs
from rpc_agent.store.decoding import StoredLines
from rpc_agent.store.encoding import encode_for_disk, migrate_lines
from rpc_agent.store.files import LoadReport
from rpc_agent.store.locking import SessionLock
from rpc_agent.store.place import SessionPlace


@dataclass(slots=True)
class Opened:
    """What a ``SessionManager`` is made of, as opening a file or starting a session finds it
    (``SessionManager.made_of`` makes the manager)."""

    place: SessionPlace
    entries: list[EntryDict]
    on_disk: bool
    lock: SessionLock | None = None
    report: LoadReport | None = None
    stored: StoredLines | None = None
    read_only: bool = False
    owns_file: bool = True
    """Whether the file now at the path is the session's own (its write chain expects it)."""


def new_header(cwd: str, parent_session: str | None) -> HeaderDict:
    header: HeaderDict = {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": files.new_session_id(),
        "timestamp": files.now_iso(),
        "cwd": cwd,
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


_NAMED_ID = re.compile(r"_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$")


def id_in_name(name: str) -> str | None:
    """The session id a pi-style file name (``<timestamp>_<id>.jsonl``) carries, if any.

    A session created at a path chosen beforehand (``rpc-agent batch`` names each task's file
    before the run, to report it even when the run crashes) takes that id, so that its name
    and its header agree as in every file the store names itself."""
    found = _NAMED_ID.search(name)
    return found.group(1) if found else None


def blob_folder(session_dir: Path, home: Path | None) -> Path:
    """Blobs live beside ``sessions/`` in the agent home: ``<home>/blobs``.

    For a session folder outside any home (a custom ``--session-dir``), the blobs go in
    ``<session_dir>/blobs`` so that the folder stays self-contained.
    """
    root = files.sessions_root(home)
    try:
        session_dir.absolute().relative_to(root.absolute())
    except ValueError:
        return session_dir / "blobs"
    return root.parent / "blobs"


def create(
    cwd: str,
    session_dir: Path | str | None,
    parent_session: str | None,
    home: Path | None,
) -> Opened:
    folder = Path(session_dir) if session_dir is not None else files.default_session_dir(cwd, home)
    header = new_header(cwd, parent_session)
    path = folder / files.session_file_name(header["timestamp"], header["id"])
    return fresh(cwd, folder, path, header, home)


def open_file(
    path: Path | str,
    session_dir: Path | str | None,
    cwd: str | None,
    home: Path | None,
    must_exist: bool,
) -> Opened:
    path = Path(path).absolute()
    folder = Path(session_dir) if session_dir is not None else path.parent
    # Before the lock, which would create folders (and a sidecar beside a device).
    if not check_session_path(path) and must_exist:
        raise SessionNotFoundError(path)
    lock = SessionLock(path)
    lock.acquire()
    try:
        return _open_locked(path, folder, lock, cwd, home, must_exist)
    except BaseException:
        lock.release()
        raise


def _open_locked(
    path: Path,
    folder: Path,
    lock: SessionLock,
    cwd: str | None,
    home: Path | None,
    must_exist: bool,
) -> Opened:
    raw = files.read_session_file(path)
    if raw is None:
        if must_exist:
            raise SessionNotFoundError(path)
        files.clear_blank_file(path)
        header = new_header(cwd or os.getcwd(), None)
        header["id"] = id_in_name(path.name) or header["id"]
        return fresh(header["cwd"], folder, path, header, home, lock=lock)
    blobs = BlobStore(blob_folder(folder, home))
    files.repair_tail(path, raw)
    lines = raw.lines
    from_version = migrate_lines(lines)
    if from_version is not None:
        raw.report.migrated_from = from_version
        # Only what the migration changed: history keeps every field it had (the rules
        # for what we write, such as dropping transient fields, are not for old lines).
        files.atomic_write(path, files.encode_lines(lines))
        lock.follow_path()
    return _from_file(raw, path, folder, blobs, cwd or None, lock=lock)


def in_memory(cwd: str | None) -> Opened:
    cwd = cwd or os.getcwd()
    return Opened(SessionPlace(cwd, new_header(cwd, None)), [], on_disk=False, owns_file=False)


def continue_recent(cwd: str, session_dir: Path | str | None, home: Path | None) -> Opened:
    folder = Path(session_dir) if session_dir is not None else files.default_session_dir(cwd, home)
    recent = listing.most_recent_session(folder)
    if recent is not None:
        return open_file(recent, folder, cwd, home, False)
    return create(cwd, folder, None, home)


def fork_from(
    source: Path | str,
    target_cwd: str,
    session_dir: Path | str | None,
    home: Path | None,
) -> Opened:
    source = Path(source).absolute()
    raw = files.read_session_file(source, defer_messages=False)  # every line is copied
    if raw is None:
        raise SessionNotFoundError(source)
    migrate_lines(raw.lines)
    _, entries = _header_and_entries(raw, BlobStore(blob_folder(source.parent, home)))
    folder = Path(session_dir) if session_dir is not None else files.default_session_dir(target_cwd, home)
    header = new_header(target_cwd, str(source))
    path = folder / files.session_file_name(header["timestamp"], header["id"])
    return fresh(target_cwd, folder, path, header, home, entries=entries, write_now=True)


def fresh(
    cwd: str,
    folder: Path,
    path: Path,
    header: HeaderDict,
    home: Path | None,
    *,
    lock: SessionLock | None = None,
    entries: list[EntryDict] | None = None,
    write_now: bool = False,
) -> Opened:
    """A new session at ``path``; written at once when ``write_now`` (copies), else deferred."""
    if lock is None:
        lock = SessionLock(path)
        lock.acquire()
    try:
        blobs = BlobStore(blob_folder(folder, home))
        entries = entries or []
        if write_now:
            files.atomic_write(path, encode_for_disk([header, *entries], blobs))
            lock.follow_path()
        return Opened(SessionPlace(cwd, header, folder, path, blobs), entries, on_disk=write_now, lock=lock)
    except BaseException:
        lock.release()
        raise


def open_read_only(path: Path | str, home: Path | None) -> Opened:
    path = Path(path).absolute()
    raw = files.read_session_file(path, defer_messages=False)
    if raw is None:
        raise SessionNotFoundError(path)
    lines = raw.lines
    migrate_lines(lines)
    blobs = BlobStore(blob_folder(path.parent, home))
    return _from_file(raw, path, path.parent, blobs, "", read_only=True)


def _from_file(
    raw: files.RawFile,
    path: Path,
    folder: Path,
    blobs: BlobStore,
    cwd: str | None,
    *,
    lock: SessionLock | None = None,
    read_only: bool = False,
) -> Opened:
    """What makes a manager for the file read (already migrated); the header's cwd wins over ``cwd``,
    and the process's is the last resort."""
    header, entries = _header_and_entries(raw, blobs)
    header_cwd = header.get("cwd")
    if not isinstance(header_cwd, str) or not header_cwd:
        header_cwd = cwd if cwd is not None else os.getcwd()
    place = SessionPlace(header_cwd, header, folder, path, blobs)
    return Opened(
        place, entries, on_disk=True, report=raw.report, lock=lock, stored=raw.stored, read_only=read_only
    )


def _header_and_entries(raw: files.RawFile, blobs: BlobStore) -> tuple[HeaderDict, list[EntryDict]]:
    """The header and the entries of a file read (and migrated), its images back from the blob
    store: where the JSON objects of the file become the shapes the store keeps."""
    header = cast("HeaderDict", raw.lines[0])
    entries = cast("list[EntryDict]", raw.lines[1:])
    if raw.mentions_blobs:
        for entry in entries:
            restore_blobs(entry, blobs)
    return header, entries
