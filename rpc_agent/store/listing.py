"""Finding sessions: the files of a folder (or of every folder) and what a listing shows of each."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson

from rpc_agent.protocol.content import message_text
from rpc_agent.protocol.methods import SessionInfoModel
from rpc_agent.protocol.shapes import HeaderDict
from rpc_agent.store.files import is_header, read_header
from rpc_agent.store.paging import SortKey, sort_newest_first


def _iso_from_ms(value: float) -> str:
    return datetime.fromtimestamp(value / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def session_info(path: Path, data: bytes | None = None) -> SessionInfoModel | None:
    """Listing metadata for one file, or None when it is not a session.

    The message count and session name need the whole file; we scan the raw bytes line by
    line and only parse lines that can matter (messages and session_info), which keeps a
    listing of many large sessions cheap. ``data``: the file's bytes when the caller has
    read them already (a search has, and checked the header).
    """
    header = read_header(path) if data is None else header_of(data)
    if header is None:
        return None
    try:
        stat = path.stat()
        if data is None:
            data = path.read_bytes()
    except OSError:
        return None
    message_count = 0
    first_message = ""
    name: str | None = None
    last_activity = 0
    for raw in data.split(b"\n")[1:]:
        is_message = raw.startswith(b'{"type":"message"') or b'"type":"message"' in raw[:64]
        is_info = not is_message and b'"session_info"' in raw[:64]
        if not (is_message or is_info):
            continue
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(entry, dict):
            continue
        if entry.get("type") == "session_info":
            # The latest one wins, and an empty name clears it (as in pi).
            name = (entry["name"].strip() or None) if isinstance(entry.get("name"), str) else None
            continue
        if entry.get("type") != "message":
            continue
        message_count += 1
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        stamp = message.get("timestamp")
        if isinstance(stamp, int | float):
            last_activity = max(last_activity, int(stamp))
        if not first_message and message.get("role") == "user":
            first_message = message_text(message.get("content"), " ")
    created = str(header.get("timestamp", ""))
    modified = (
        _iso_from_ms(last_activity) if last_activity else (created or _iso_from_ms(stat.st_mtime * 1000))
    )
    parent = header.get("parentSession")
    return SessionInfoModel(
        path=str(path),
        id=str(header["id"]),
        cwd=str(header.get("cwd", "")),
        name=name,
        parentSession=parent if isinstance(parent, str) else None,
        created=created,
        modified=modified,
        messageCount=message_count,
        firstMessage=first_message or "(no messages)",
    )


def header_of(data: bytes) -> HeaderDict | None:
    """The header on the first line of a file's bytes, or None when it is not a session."""
    end = data.find(b"\n")
    try:
        header = orjson.loads(data[: end if end >= 0 else len(data)])
    except orjson.JSONDecodeError:
        return None
    return header if is_header(header) else None


def list_sessions(folder: Path) -> list[SessionInfoModel]:
    """Sessions in one folder, most recently active first."""
    if not folder.is_dir():
        return []
    infos = [
        info
        for child in folder.iterdir()
        if child.suffix == ".jsonl" and child.is_file()
        for info in [session_info(child)]
        if info is not None
    ]
    sort_newest_first(infos, listing_key)
    return infos


def listing_key(info: SessionInfoModel) -> SortKey:
    """What a listing is ordered by (newest activity first), for its cursor."""
    return (info.modified, info.path)


def cwd_folders(root: Path) -> list[Path]:
    """The folder of every working directory under a sessions root."""
    if not root.is_dir():
        return []
    return [folder for folder in root.iterdir() if folder.is_dir()]


def list_all_sessions(root: Path) -> list[SessionInfoModel]:
    """Sessions of every working directory under a sessions root, most recent first."""
    infos = [info for folder in cwd_folders(root) for info in list_sessions(folder)]
    sort_newest_first(infos, listing_key)
    return infos


def most_recent_session(folder: Path) -> Path | None:
    """The session file modified last (by mtime, as the reference agent picks it)."""
    if not folder.is_dir():
        return None
    candidates = [
        (child.stat().st_mtime, child)
        for child in folder.iterdir()
        if child.suffix == ".jsonl" and child.is_file() and read_header(child) is not None
    ]
    return max(candidates)[1] if candidates else None
