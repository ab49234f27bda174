"""Reading a message line without building it: its head for the index, its bytes for readers.

A long session is mostly message lines that nobody looks at again, and the lines that are
looked at (the current path's messages, a whole ``get_entries``) go straight back out as
JSON. So a message line is decoded only as far as the index needs (type, id, parent,
timestamp), its message is located as a raw slice of the line, and the line's bytes are kept:
a reader that wants JSON gets those bytes, a reader that wants the dict parses them once.

msgspec skips the message without building it but still checks every byte of it, so a line
that would not parse is found here, at open, and never sent on as JSON.
"""

from __future__ import annotations

from typing import Literal

import msgspec
import orjson

from rpc_agent.protocol.shapes import EntryDict

BLOB_MARK = b"blob:sha256:"
"""Lines holding blob references are parsed at once: their images are restored, never sent raw."""


class MessageHead(msgspec.Struct, gc=False):
    """A message line's index fields, typed: msgspec checks the types as it reads, and a line
    whose fields are missing or of another type (not a message, or an odd one) fails to decode
    here and is parsed the ordinary way. Not tracked by the collector: one is made per line.

    ``files.parse_lines`` makes a stub entry of a head whose message is an object (type, id,
    parent, timestamp) and keeps the line and the message's slice in ``StoredLines``; any
    other line, blob references included, is parsed the ordinary way (which reports bytes
    that are not JSON). Whether the message's content is one pi normalises is asked when it
    is sent (``sendable``).
    """

    type: Literal["message"]
    id: str
    parentId: str | None
    timestamp: str
    message: msgspec.Raw


decode_head = msgspec.json.Decoder(MessageHead).decode
"""Raises ``msgspec.DecodeError`` (``ValidationError`` too) for a line that is no such head."""

_NULL = msgspec.Raw(b"null")


class _OwnContent(msgspec.Struct, gc=False):
    """A message's own ``content``, as a JSON parser sees it (escapes decoded, the last of
    duplicate keys wins); a missing one reads as null."""

    content: msgspec.Raw = _NULL


_decode_own_content = msgspec.json.Decoder(_OwnContent).decode


def sendable(message: msgspec.Raw) -> bool:
    """Whether a stored message can go out as it is: an object whose own ``content`` is
    present and not null.

    pi reads a null or missing content as "" or [] (``projection.normalized``), so any other
    message is parsed before it is sent. Asked of the messages a reader sends, not of every
    line at open: a long session's open reads each line once, at C speed, and most of its
    lines are never sent; the check reads a message's own top-level key, so a ``content``
    nested in it (a tool call's arguments, ``details``) or placed anywhere in a long line is
    judged as it is.
    """
    try:
        return _decode_own_content(message).content != _NULL
    except msgspec.DecodeError:  # not an object (ValidationError): parsed, then left out
        return False


class StoredMessage:
    """A message entry held as its line: the bytes and the slice of them that is the message."""

    __slots__ = ("line", "message")

    def __init__(self, line: bytes, message: msgspec.Raw) -> None:
        self.line = line
        self.message = message
        """A view into ``line`` (no copy)."""

    def parse(self) -> EntryDict | None:
        """The whole entry as a dict; None if the line does not parse after all."""
        try:
            value: EntryDict = orjson.loads(self.line)
        except orjson.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None


class StoredLines:
    """The lines of stub entries, by position among the entries.

    Two plain dicts of bytes: the cyclic collector never has to visit them, where 100,000
    small objects would be walked by every full collection for as long as the session is open.
    """

    __slots__ = ("lines", "messages")

    def __init__(self) -> None:
        self.lines: dict[int, bytes] = {}
        self.messages: dict[int, msgspec.Raw] = {}

    def get(self, position: int) -> StoredMessage | None:
        line = self.lines.get(position)
        return None if line is None else StoredMessage(line, self.messages[position])

    def pop(self, position: int) -> StoredMessage | None:
        line = self.lines.pop(position, None)
        return None if line is None else StoredMessage(line, self.messages.pop(position))

    def __len__(self) -> int:
        return len(self.lines)
