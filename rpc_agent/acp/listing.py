"""``session/list``: the sessions the agent keeps, filtered by cwd, a page at a time.

The cursor is opaque to the client; ours is the position in the newest-first list, so a
session written while a client pages on can shift an entry by one page, never hide a page.
A cursor we did not hand out is an invalid-params error, as ACP asks.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from acp import RequestError

from ..protocol.methods import SessionInfoModel
from ..session import files, listing

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


def find_sessions(session_dir: Path | None, home: Path, cwd: str | None) -> list[SessionInfoModel]:
    """Every session in the session folder (``--session-dir``) or under the home's sessions
    root, newest first; only those of ``cwd`` when it is given."""
    if session_dir is not None:
        infos = listing.list_sessions(session_dir)
    elif cwd is not None:
        infos = listing.list_sessions(files.default_session_dir(cwd, home))
    else:
        infos = listing.list_all_sessions(files.sessions_root(home))
    if cwd is not None:
        infos = [info for info in infos if info.cwd == cwd]
    return infos


def page(infos: list[SessionInfoModel], cursor: str | None) -> tuple[list[SessionInfoModel], str | None]:
    start = decode_cursor(cursor) if cursor is not None else 0
    if start > len(infos):
        raise RequestError.invalid_params({"details": "cursor is past the end of the list"})
    end = start + PAGE_SIZE
    return infos[start:end], encode_cursor(end) if end < len(infos) else None
