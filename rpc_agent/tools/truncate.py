"""Keeping tool output within what a model turn can sensibly carry.

Two independent limits apply, whichever is hit first: a number of lines and a number of UTF-8
bytes. ``truncate_head`` keeps the beginning (file reads, search results), ``truncate_tail``
keeps the end (command output, where the last lines matter most). Neither returns a partial
line, except ``truncate_tail`` when the last line alone is over the byte limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
MAX_LINE_CHARS = 2000
"""Longest line ``read`` shows before cutting it."""
GREP_MAX_LINE_CHARS = 500
"""Longest matching line ``grep`` shows before cutting it."""


@dataclass(frozen=True, slots=True)
class Truncation:
    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool = False
    """Only from ``truncate_tail``: the kept text starts inside a line longer than the byte limit."""


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def _byte_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def count_lines(text: str) -> int:
    """Lines in ``text``; a final newline does not start another line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _split(text: str) -> list[str]:
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def truncate_head(
    text: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep the first complete lines of ``text`` that fit both limits."""
    return _truncate(text, max_lines, max_bytes, from_end=False)


def truncate_tail(
    text: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep the last complete lines of ``text`` that fit both limits."""
    return _truncate(text, max_lines, max_bytes, from_end=True)


def _truncate(text: str, max_lines: int, max_bytes: int, *, from_end: bool) -> Truncation:
    lines = _split(text)
    total_bytes = _byte_len(text)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return Truncation(text, False, None, len(lines), total_bytes, len(lines), total_bytes)
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    partial = False
    for line in reversed(lines) if from_end else lines:
        if len(kept) >= max_lines:
            truncated_by = "lines"
            break
        size = _byte_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            if from_end and not kept:
                # The last line alone is too long: keep its end rather than nothing.
                kept.append(_tail_bytes(line, max_bytes))
                partial = True
            break
        kept.append(line)
        used += size
    if from_end:
        kept.reverse()
    content = "\n".join(kept)
    return Truncation(
        content, True, truncated_by, len(lines), total_bytes, len(kept), _byte_len(content), partial
    )


def _tail_bytes(text: str, max_bytes: int) -> str:
    """The longest suffix of ``text`` that is at most ``max_bytes`` UTF-8 bytes."""
    data = text.encode("utf-8", "surrogatepass")[-max_bytes:] if max_bytes > 0 else b""
    # A cut inside a multi-byte character leaves continuation bytes at the start: drop them.
    start = 0
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "replace")


def shorten_line(line: str, max_chars: int) -> tuple[str, bool]:
    """Cut ``line`` to ``max_chars`` characters, saying how much was left out."""
    if len(line) <= max_chars:
        return line, False
    return f"{line[:max_chars]}... [{len(line) - max_chars} more chars]", True
