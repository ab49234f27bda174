"""Tool arguments from ``input_json_delta`` chunks, as far as they can be read so far.

A host shows a tool call while its arguments stream in (a file being written, say), so each
chunk updates a best-effort view of the object. pydantic_core parses incomplete JSON itself
(``allow_partial="trailing-strings"``: an open string is kept as far as it arrived, a cut key,
literal or escape is left out). Two things are ours: a number whose tail is still open (``-1.``,
``2e``) is read without that tail, so a key never disappears from one view to the next; and a
long argument is not re-parsed on every chunk (that would be quadratic in its length) but once
it has grown by a fraction of itself, so the cost stays linear and a view is at most that
fraction behind; ``final()`` always parses everything.
"""

from __future__ import annotations

import re

from pydantic_core import from_json

from rpc_agent.protocol.base import JsonDict

__all__ = ["PartialJson"]


_OPEN_NUMBER_TAIL = re.compile(r"(?<=[0-9:,\[\s])[-+.eE]+$")
_ALWAYS_PARSE_BELOW = 4096
"""Arguments shorter than this (characters) are parsed on every chunk."""
_GROWTH = 8
"""A longer argument is parsed again once it has grown by 1/_GROWTH of what was parsed."""


class PartialJson:
    __slots__ = ("_chunks", "_length", "_parsed_length", "value")

    def __init__(self) -> None:
        self._chunks: list[str] = []
        """What arrived, joined only when it is parsed: adding each chunk to one string would
        copy all of it again per chunk."""
        self._length = 0
        self.value: JsonDict = {}
        self._parsed_length = 0

    @property
    def text(self) -> str:
        """Everything fed so far."""
        if len(self._chunks) > 1:
            self._chunks = ["".join(self._chunks)]
        return self._chunks[0] if self._chunks else ""

    def feed(self, chunk: str) -> JsonDict:
        self._chunks.append(chunk)
        self._length += len(chunk)
        length = self._length
        if length >= _ALWAYS_PARSE_BELOW and length - self._parsed_length < self._parsed_length // _GROWTH:
            return self.value
        self._parsed_length = length
        parsed = _parse(_OPEN_NUMBER_TAIL.sub("", self.text), partial=True)
        if parsed is not None:
            self.value = parsed
        return self.value

    def final(self) -> JsonDict:
        if not self.text.strip():
            return self.value
        parsed = _parse(self.text, partial=False)
        if parsed is None:
            parsed = _parse(self.text, partial=True)
        if parsed is not None:
            self.value = parsed
        return self.value


def _parse(text: str, *, partial: bool) -> JsonDict | None:
    try:
        value = from_json(text, allow_partial="trailing-strings" if partial else False)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
