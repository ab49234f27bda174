"""Where session files live and how they are read, rewritten and locked.

The folder layout shared with the pi coding agent, regular files only, the lenient line reader
and atomic rewrites. The append path is writer.py, the one-writer lock locking.py, discovery
listing.py, and the rule of what only a session's write chain may write guard.py.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import msgspec
import orjson

from rpc_agent.errors import InvalidSessionFileError
from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.entries import CURRENT_SESSION_VERSION
from rpc_agent.protocol.shapes import HeaderDict
from rpc_agent.regular_files import open_regular, read_regular
from rpc_agent.store.decoding import BLOB_MARK, MessageHead, StoredLines, decode_head

HOME_ENV = "RPC_AGENT_HOME"


def agent_home() -> Path:
    """``$RPC_AGENT_HOME``, else ``~/.rpc-agent``."""
    configured = os.environ.get(HOME_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".rpc-agent"


def encode_cwd(cwd: str) -> str:
    """Folder name for a working directory: the reference agent's encoding, byte for byte."""
    stripped = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    for char in "/\\:":
        stripped = stripped.replace(char, "-")
    return f"--{stripped}--"


def sessions_root(home: Path | None = None) -> Path:
    return (home or agent_home()) / "sessions"


def default_session_dir(cwd: str, home: Path | None = None) -> Path:
    return sessions_root(home) / encode_cwd(cwd)


_iso_second: list[Any] = [None, ""]
"""The last second formatted by ``now_iso`` and its text (formatting is most of the cost)."""


def now_iso() -> str:
    """ISO-8601 in UTC with milliseconds and ``Z``, as JavaScript's ``toISOString``."""
    now = time.time()
    second = int(now)
    if _iso_second[0] != second:
        _iso_second[1] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _iso_second[0] = second
    return f"{_iso_second[1]}.{int((now - second) * 1000):03d}Z"


def new_session_id() -> str:
    """A UUIDv7 (RFC 9562: 48 bits of Unix milliseconds, then random bits), as pi 1.5 names its
    sessions: ids sort by creation time."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | 0x7 << 76  # version 7
    value = (value & ~(0x3 << 62)) | 0x2 << 62  # variant 10
    return str(uuid.UUID(int=value))


def session_file_name(timestamp: str, session_id: str) -> str:
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


# --- reading ------------------------------------------------------------------------------


@dataclass(slots=True)
class LoadReport:
    """What a lenient load had to skip or repair; damage is reported, never fatal."""

    skipped_lines: list[int] = field(default_factory=list)
    torn_tail_bytes: int = 0
    migrated_from: int | None = None
    damaged_entries: list[str] = field(default_factory=list)
    """Ids of message lines whose prefix was fine but whose JSON turned out broken when read."""

    @property
    def skipped(self) -> int:
        return len(self.skipped_lines)


@dataclass(slots=True)
class RawFile:
    lines: list[JsonDict]
    """The file's JSON objects as read: the header, then the entries (those of an old version
    as they were, before migration gives them ids; see ``opening``)."""
    report: LoadReport
    valid_length: int
    """Byte length of the whole, newline-terminated part of the file."""
    needs_newline: bool
    """The file ends in a complete JSON line that lacks its newline."""
    mentions_blobs: bool = False
    """Some line holds a blob reference (so restoring is worth a pass over the entries)."""
    stored: StoredLines = field(default_factory=StoredLines)
    """Message lines read as stubs, by position among the entries (``lines[1:]``)."""


MESSAGE_PREFIX = re.compile(
    rb'\{"type":"message","id":"([^"\\]*)","parentId":(?:"([^"\\]*)"|null),"timestamp":"([^"\\]*)"'
)
"""How both this store and the reference agent begin a message line (the keys in this order)."""


def is_header(line: object) -> TypeGuard[HeaderDict]:
    return isinstance(line, dict) and line.get("type") == "session" and isinstance(line.get("id"), str)


def parse_lines(data: bytes, *, defer_messages: bool = False) -> RawFile:
    """Parse JSONL leniently: bad lines are skipped and counted, a torn last line is dropped.

    A crash can leave the last line without its newline. If what is there still parses, it is
    kept (only the newline is missing); otherwise it is cut off and reported.

    With ``defer_messages``, a well-formed message line becomes a stub dict holding just
    ``type``, ``id``, ``parentId`` and ``timestamp``, and its bytes are kept in ``stored``
    (see ``decoding``). A message line whose prefix is right but whose JSON is broken stays
    in the tree as such a stub, without bytes, and is reported in ``damaged_entries``; it
    never reaches the model.
    """
    report = LoadReport()
    lines: list[JsonDict] = []
    needs_newline = False
    valid_length = len(data)
    body = data
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        tail = data[cut:]
        try:
            parsed_tail = orjson.loads(tail)
        except orjson.JSONDecodeError:
            parsed_tail = None
        if isinstance(parsed_tail, dict):
            needs_newline = True
        else:
            report.torn_tail_bytes = len(tail)
            valid_length = cut
            body = data[:cut]
    mentions_blobs = BLOB_MARK in body
    loads = orjson.loads
    stored = StoredLines()
    append = lines.append
    # The stub of a message line is made here, with no call and no tuple per line (it runs
    # for every line of a long file); see ``decoding.MessageHead``.
    stored_lines, stored_messages = stored.lines, stored.messages
    for number, raw in enumerate(_split_lines(body), start=1):
        if defer_messages and not (mentions_blobs and BLOB_MARK in raw):
            try:
                head: MessageHead | None = decode_head(raw)
            except msgspec.DecodeError:
                head = None
            if head is not None and memoryview(head.message)[0] == 0x7B:  # "{": an object
                position = len(lines) - 1  # the header is line 0
                stored_lines[position] = raw
                stored_messages[position] = head.message
                append(
                    {"type": "message", "id": head.id, "parentId": head.parentId, "timestamp": head.timestamp}
                )
                continue
        if not raw or raw.isspace():
            continue
        try:
            value = loads(raw)
        except orjson.JSONDecodeError:
            prefix = MESSAGE_PREFIX.match(raw) if defer_messages else None
            if prefix is not None:
                entry_id, parent, timestamp = prefix.groups()
                append(
                    {
                        "type": "message",
                        "id": entry_id.decode(),
                        "parentId": None if parent is None else parent.decode(),
                        "timestamp": timestamp.decode(),
                    }
                )
                report.damaged_entries.append(entry_id.decode())
            else:
                report.skipped_lines.append(number)
            continue
        if isinstance(value, dict):
            append(value)
        else:
            report.skipped_lines.append(number)
    return RawFile(
        lines=lines,
        report=report,
        valid_length=valid_length,
        needs_newline=needs_newline,
        mentions_blobs=mentions_blobs,
        stored=stored,
    )


def _split_lines(body: bytes, chunk: int = 1 << 20) -> Iterator[bytes]:
    """``body.split(b"\\n")`` (without its empty last piece) a megabyte at a time.

    One split of a 75 MB file is one long C call that holds the GIL, and so keeps a server's
    event loop from answering anything while a worker thread opens the file.
    """
    start, size = 0, len(body)
    while start < size:
        end = body.find(b"\n", min(start + chunk, size))
        if end < 0:
            end = size
        yield from body[start:end].split(b"\n")
        start = end + 1


def lazy_disabled() -> bool:
    """``RPC_AGENT_EAGER_LOAD=1`` parses every line at open (for comparison and debugging)."""
    return os.environ.get("RPC_AGENT_EAGER_LOAD", "") not in ("", "0")


def read_session_file(path: Path, *, defer_messages: bool = True) -> RawFile | None:
    """The parsed file, or None when there is no file (or it is empty): a new session.

    Raises InvalidSessionFileError for a non-empty file without a session header: such a file
    is somebody else's data and must never be overwritten.
    """
    data = read_regular(path)
    if not data or data.isspace():
        return None
    first_line = data[: data.find(b"\n")] if b"\n" in data else data
    try:
        header = orjson.loads(first_line)
    except orjson.JSONDecodeError:
        header = None
    # Only a current-version file can be read lazily: migrations rewrite every line.
    current = is_header(header) and header.get("version") == CURRENT_SESSION_VERSION
    raw = parse_lines(data, defer_messages=defer_messages and current and not lazy_disabled())
    if not raw.lines or not is_header(raw.lines[0]):
        raise InvalidSessionFileError(path, "the first line is not a session header")
    return raw


def read_header(path: Path, prefix: int = 4096) -> HeaderDict | None:
    """The header of a session file from a prefix read, or None when it is not a session."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except (OSError, InvalidSessionFileError):
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            head = handle.read(prefix)
            while b"\n" not in head:
                more = handle.read(65536)
                if not more:
                    break
                head += more
    except OSError:
        return None
    first = head.split(b"\n", 1)[0]
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return None
    return value if is_header(value) else None


# --- writing ------------------------------------------------------------------------------


def fsync_dir(folder: Path) -> None:
    """Make a create/rename in ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def encode_lines(lines: Iterable[Mapping[str, Any]]) -> bytes:
    dumps, option = orjson.dumps, orjson.OPT_APPEND_NEWLINE
    return b"".join(dumps(line, option=option) for line in lines)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves either the old or the new file.

    Temp file in the same folder (rename is only atomic within a file system), fsync, rename,
    fsync of the folder.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def clear_blank_file(path: Path) -> None:
    """Empty a file that holds only whitespace, so that a new session's header is line 1.

    Such a file is opened as a new session; appending to it as it is would put blank lines
    before the header, and readers that look at the first line (listings, the reference
    agent's discovery) would no longer see a session.
    """
    try:
        if path.stat().st_size == 0:
            return
    except FileNotFoundError:
        return
    with path.open("r+b") as handle:
        if handle.read().strip():
            return  # not blank after all: never destroy data
        handle.truncate(0)
        handle.flush()
        os.fsync(handle.fileno())


def repair_tail(path: Path, raw: RawFile) -> None:
    """Cut a torn last line, or finish a complete one, so the next append starts a fresh line."""
    if raw.report.torn_tail_bytes:
        with path.open("r+b") as handle:
            handle.truncate(raw.valid_length)
            handle.flush()
            os.fsync(handle.fileno())
    elif raw.needs_newline:
        with path.open("ab") as handle:
            handle.write(b"\n")
            handle.flush()
            os.fsync(handle.fileno())
