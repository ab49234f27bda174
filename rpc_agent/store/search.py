"""Finding sessions by what was said in them: a scan of the files' bytes, no index.

What matches: the query as a case-insensitive substring (``str.lower`` on both sides) of

- the text of user and assistant messages (text blocks; not thinking, tool calls, tool
  results, bash output or images: those would match nearly every session on a file name);
- the session's current name (the latest ``session_info``);
- the current labels of its entries (the latest ``label`` entry per target).

How it stays fast: each file is lowered as bytes (ASCII only, one C call) and searched for the
longest run of the lowered query that is in the bytes of every line that matches; only the
lines holding that run are decoded and checked for real. Such a run is printable ASCII other
than ``"`` and ``\\`` (pi and rpc-agent write those characters as themselves, never escaped),
and it avoids the two ASCII letters that a non-ASCII character lowers to: "k" (from U+212A, the
Kelvin sign) and an "i" that may be the start of "i̇" (from U+0130: an "i" followed by U+0307
in the query, or the query's last character). A query without such a run is checked line by
line. Files are read newest first and the scan stops once it has one more hit than the page
holds, so a common word costs a page of files, and only a query that matches little reads
everything.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from rpc_agent.errors import InvalidRequestError
from rpc_agent.protocol.content import message_text
from rpc_agent.protocol.finding import SearchSessionsResult, SessionSearchHit
from rpc_agent.protocol.methods import SessionInfoModel
from rpc_agent.protocol.shapes import EntryDict
from rpc_agent.store import paging
from rpc_agent.store.listing import header_of, session_info

SNIPPET_BEFORE = 40
SNIPPET_AFTER = 100
MAX_ENTRY_IDS = 100
"""Entry ids reported per session; a session matching more says so with ``moreMatches``."""

_SAFE_RUN = re.compile(r"[\x20\x21\x23-\x5b\x5d-\x6a\x6c-\x7e]+")
"""Printable ASCII except ``"``, ``\\`` and "k" (see the module doc)."""
_OTHER_ROLE = re.compile(
    rb'\{"type":"message","id":"[^"\\]*","parentId":(?:"[^"\\]*"|null),"timestamp":"[^"\\]*",'
    rb'"message":\{"role":"(?!user"|assistant")'
)
"""A message line as pi and rpc-agent begin it, of a role whose text is not searched (a tool
result, bash output): skipped undecoded, however often it holds the query."""
_ENTRY_TYPES = (b'"message"', b'"label"', b'"session_info"')
"""What a line of each entry type that can match holds, however its writer spaces the JSON."""


@dataclass(slots=True)
class Candidate:
    """A file that may be a session, with what orders it (newest mtime first)."""

    path: str
    mtime_ns: int

    def key(self) -> paging.SortKey:
        return (self.mtime_ns, self.path)


@dataclass(slots=True)
class FileMatch:
    """Where one session matched: entry ids in file order, the text around the first match."""

    entry_ids: list[str] = field(default_factory=list)
    more: bool = False
    snippet: str = ""
    name_matched: bool = False


@dataclass(slots=True)
class Hit:
    candidate: Candidate
    info: SessionInfoModel
    """What a listing shows of the session (made while its bytes are at hand, which are not
    kept: a page of big sessions would hold them all)."""
    match: FileMatch


def candidates(folders: list[Path]) -> list[Candidate]:
    """The ``*.jsonl`` regular files of the folders, newest first (a stat each, no read)."""
    found: list[Candidate] = []
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if not entry.name.endswith(".jsonl"):
                        continue
                    try:
                        if entry.is_file():
                            found.append(Candidate(entry.path, entry.stat().st_mtime_ns))
                    except OSError:
                        continue
        except (FileNotFoundError, NotADirectoryError):
            continue
    paging.sort_newest_first(found, Candidate.key)
    return found


def search(folders: list[Path], query: str, limit: int, cursor: str | None) -> tuple[list[Hit], str | None]:
    """The sessions in ``folders`` matching ``query``, newest first, a page of ``limit``."""
    lowered = query.lower()
    if not lowered.strip():
        raise InvalidRequestError("query must not be empty")
    needle = scan_needle(lowered)
    files = candidates(folders)
    start = 0
    if cursor is not None:
        cursor_key = paging.decode_cursor("search", cursor)
        while start < len(files) and not paging.after(files[start].key(), cursor_key):
            start += 1
    hits: list[Hit] = []
    for candidate in files[start:]:
        data = _read_session(candidate.path)
        if data is None:
            continue
        match = match_file(data, lowered, needle)
        if match is None:
            continue
        if len(hits) == limit:  # one hit more than the page holds: there is a next page
            return hits, paging.encode_cursor("search", hits[-1].candidate.key())
        info = session_info(Path(candidate.path), data)
        if info is not None:
            hits.append(Hit(candidate, info, match))
    return hits, None


def search_sessions(folders: list[Path], query: str, limit: int, cursor: str | None) -> SearchSessionsResult:
    """``search`` in the protocol's terms."""
    hits, next_cursor = search(folders, query, limit, cursor)
    found = [
        SessionSearchHit(
            session=hit.info,
            entryIds=hit.match.entry_ids,
            moreMatches=hit.match.more,
            nameMatched=hit.match.name_matched,
            snippet=hit.match.snippet,
        )
        for hit in hits
    ]
    return SearchSessionsResult(sessions=found, nextCursor=next_cursor)


def scan_needle(lowered_query: str) -> bytes:
    """The part of the query every matching line holds as bytes (empty: none; see the module doc)."""
    plain = lowered_query.replace("i\u0307", "\u0307")
    if plain.endswith("i"):
        plain = plain[:-1]
    runs = _SAFE_RUN.findall(plain)
    return max(runs, key=len).encode("ascii") if runs else b""


def _read_session(path: str) -> bytes | None:
    """The file's bytes when its first line is a session header."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return data if header_of(data) is not None else None


def match_file(data: bytes, lowered_query: str, needle: bytes) -> FileMatch | None:
    """Where the session in ``data`` matches, or None (``needle``: see the module doc)."""
    if not needle:
        lines = _typed_lines(data)
    else:
        low = data.lower()
        if needle not in low:
            return None
        lines = _lines_holding(data, low, needle)
    found: list[tuple[int, str, str]] = []
    """(offset in the file, entry id, the text that matched) of messages and labelled entries."""
    label_hits: dict[str, tuple[int, str]] = {}
    name_hit = False
    for offset, entry in lines:
        kind = entry.get("type")
        if kind == "message":
            message = entry.get("message")
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                continue
            text = message_text(message.get("content"), "\n")
            if lowered_query in text.lower() and isinstance(entry.get("id"), str):
                found.append((offset, entry["id"], text))
        elif kind == "label":
            label, target = entry.get("label"), entry.get("targetId")
            if isinstance(label, str) and isinstance(target, str) and lowered_query in label.lower():
                label_hits[target] = (offset, label)
        elif kind == "session_info":
            name = entry.get("name")
            name_hit = name_hit or (isinstance(name, str) and lowered_query in name.lower())
    if label_hits:
        current = _current_labels(data)
        found += [
            (offset, target, label)
            for target, (offset, label) in label_hits.items()
            if current.get(target) == label
        ]
    name = _current_name(data) if name_hit else None
    name_matched = name is not None and lowered_query in name.lower()
    if not found and not name_matched:
        return None
    found.sort(key=lambda item: item[0])
    first_text = found[0][2] if found else (name or "")
    entry_ids = list(dict.fromkeys(entry_id for _, entry_id, _ in found))  # a message and its label: once
    return FileMatch(
        entry_ids=entry_ids[:MAX_ENTRY_IDS],
        more=len(entry_ids) > MAX_ENTRY_IDS,
        snippet=snippet(first_text, lowered_query),
        name_matched=name_matched,
    )


def _line_at(data: bytes, position: int) -> tuple[int, int]:
    start = data.rfind(b"\n", 0, position) + 1
    end = data.find(b"\n", position)
    return start, len(data) if end < 0 else end


def _parse(line: bytes) -> EntryDict | None:
    try:
        value: EntryDict = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _lines_holding(data: bytes, low: bytes, needle: bytes) -> Iterator[tuple[int, EntryDict]]:
    """The entries on the lines where ``needle`` is (each line once), header excluded."""
    position = low.find(needle, data.find(b"\n") + 1)
    while position >= 0:
        start, end = _line_at(data, position)
        if _OTHER_ROLE.match(data, start) is None:
            entry = _parse(data[start:end])
            if entry is not None:
                yield start, entry
        position = low.find(needle, end)


def _typed_lines(data: bytes, kinds: tuple[bytes, ...] = _ENTRY_TYPES) -> Iterator[tuple[int, EntryDict]]:
    """Every line that may be an entry of ``kinds`` (the careful path), header excluded."""
    start = data.find(b"\n") + 1
    while 0 < start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line = data[start:end]
        if any(kind in line for kind in kinds):
            entry = _parse(line)
            if entry is not None:
                yield start, entry
        start = end + 1


def _current_labels(data: bytes) -> dict[str, str]:
    """Each entry's label as the latest label entry left it (an empty one removes it)."""
    labels: dict[str, str] = {}
    for _, entry in _typed_lines(data, (b'"label"',)):
        target, label = entry.get("targetId"), entry.get("label")
        if entry.get("type") != "label" or not isinstance(target, str):
            continue
        if isinstance(label, str) and label:
            labels[target] = label
        else:
            labels.pop(target, None)
    return labels


def _current_name(data: bytes) -> str | None:
    name: str | None = None
    for _, entry in _typed_lines(data, (b'"session_info"',)):
        if entry.get("type") == "session_info":
            value = entry.get("name")
            name = (value.strip() or None) if isinstance(value, str) else None
    return name


def snippet(text: str, lowered_query: str) -> str:
    """One line of ``text`` around the first match of the query (whitespace collapsed)."""
    flat = " ".join(text.split())
    at = flat.lower().find(lowered_query.strip().lower())
    if at < 0:
        return flat[: SNIPPET_BEFORE + SNIPPET_AFTER]
    start = max(0, at - SNIPPET_BEFORE)
    end = min(len(flat), at + len(lowered_query) + SNIPPET_AFTER)
    return ("…" if start > 0 else "") + flat[start:end] + ("…" if end < len(flat) else "")
