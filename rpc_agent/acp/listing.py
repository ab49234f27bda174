"""``session/list``: the sessions the agent keeps, filtered by cwd, a page at a time.

The cursor is opaque to the client; ours is the position in the newest-first list, so a
session written while a client pages on can shift an entry by one page, never hide a page.
A cursor we did not hand out is an invalid-params error, as ACP asks.

A session last opened in another folder (``session.workspaces``) is listed under that folder
too, with the folder as its cwd, and under each of its additional directories; unfiltered, it
shows the folder it was last opened in.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path

from acp import RequestError
from rpc_agent.protocol.methods import SessionInfoModel
from rpc_agent.store import files, listing
from rpc_agent.store.workspaces import Workspace, WorkspaceIndex

PAGE_SIZE = 50


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        offset = json.loads(raw)["offset"]
    except (ValueError, KeyError, TypeError) as exc:
        raise RequestError.invalid_params({"details": f"invalid cursor {cursor[:40]!r}"}) from exc
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise RequestError.invalid_params({"details": f"invalid cursor {cursor[:40]!r}"})
    return offset


@dataclass(frozen=True, slots=True)
class Listed:
    info: SessionInfoModel
    cwd: str
    """The cwd to report: the folder asked about, else where the session was last opened."""
    additional_directories: tuple[str, ...] = ()


def _recorded_elsewhere(index: dict[str, Workspace], known: set[str], cwd: str) -> list[SessionInfoModel]:
    """Sessions whose files live in other folders but were last opened in (or with) ``cwd``."""
    found: list[SessionInfoModel] = []
    for session_id, workspace in index.items():
        if session_id in known or not workspace.covers(cwd):
            continue
        info = listing.session_info(Path(workspace.path))
        if info is not None and info.id == session_id:
            found.append(info)
    return found


def _same_file(a: str, b: str) -> bool:
    return a == b or os.path.realpath(a) == os.path.realpath(b)


def find_sessions(session_dir: Path | None, home: Path, cwd: str | None) -> list[Listed]:
    """Every session in the session folder (``--session-dir``) or under the home's sessions
    root, newest first; only those of ``cwd`` when it is given."""
    index = WorkspaceIndex(home).entries()
    if session_dir is not None:
        infos = listing.list_sessions(session_dir)
    elif cwd is not None:
        infos = listing.list_sessions(files.default_session_dir(cwd, home))
        infos += _recorded_elsewhere(index, {info.id for info in infos}, cwd)
        infos.sort(key=lambda info: info.modified, reverse=True)
    else:
        infos = listing.list_all_sessions(files.sessions_root(home))
    found: list[Listed] = []
    for info in infos:
        workspace = index.get(info.id)
        if workspace is not None and not _same_file(workspace.path, info.path):
            workspace = None  # an entry about another file with that id (a copy)
        roots = workspace.additional_directories if workspace is not None else ()
        if cwd is None:
            found.append(Listed(info, workspace.cwd if workspace is not None else info.cwd, roots))
        elif info.cwd == cwd or (workspace is not None and workspace.covers(cwd)):
            found.append(Listed(info, cwd, roots))
    return found


def page(infos: list[Listed], cursor: str | None) -> tuple[list[Listed], str | None]:
    start = decode_cursor(cursor) if cursor is not None else 0
    if start > len(infos):
        raise RequestError.invalid_params({"details": "cursor is past the end of the list"})
    end = start + PAGE_SIZE
    return infos[start:end], encode_cursor(end) if end < len(infos) else None
