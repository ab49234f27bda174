"""Pages of a newest-first list of sessions, behind an opaque cursor.

A cursor names the last item a page held by its sort key (not by its position), so that a
session written while a client pages on lands before the pages already read and shifts
nothing: each session that stays put is seen exactly once. The key is what the list is sorted
by (the last activity for ``list_sessions``, the file's mtime for ``search_sessions``) with
the path to break ties. A cursor carries its kind, so one method's cursor is refused by the
other instead of being misread.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Literal, TypeVar

import orjson

from rpc_agent.errors import InvalidRequestError

T = TypeVar("T")

CursorKind = Literal["list", "search"]
SortKey = tuple[str, str] | tuple[int, str]
"""(the newest-first value, the path): sorted by value descending, then path ascending."""


def encode_cursor(kind: CursorKind, key: SortKey) -> str:
    raw = orjson.dumps({"k": kind, "v": key[0], "p": key[1]})
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(kind: CursorKind, cursor: str) -> SortKey:
    """The key a cursor of ``kind`` names; anything we did not hand out is INVALID_PARAMS."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = orjson.loads(raw)
    except ValueError:
        value = None
    if isinstance(value, dict) and value.get("k") == kind and isinstance(value.get("p"), str):
        key, path = value.get("v"), value["p"]
        # The list sorts by an ISO time, the search by an mtime in nanoseconds.
        if kind == "list" and isinstance(key, str):
            return (key, path)
        if kind == "search" and isinstance(key, int) and not isinstance(key, bool):
            return (key, path)
    raise InvalidRequestError(f"invalid cursor {cursor[:40]!r}: pass a nextCursor this method returned")


def after(key: SortKey, cursor_key: SortKey) -> bool:
    """Whether ``key`` comes after ``cursor_key`` in newest-first order (both of one kind)."""
    value, path = key
    cursor_value, cursor_path = cursor_key
    if value == cursor_value:
        return path > cursor_path
    return value < cursor_value  # type: ignore[operator]


def sort_newest_first(items: list[T], key: Callable[[T], SortKey]) -> None:
    """Sort in place: value descending, then path ascending (two stable passes)."""
    items.sort(key=lambda item: key(item)[1])
    items.sort(key=lambda item: key(item)[0], reverse=True)


def page(
    items: Sequence[T],
    key: Callable[[T], SortKey],
    kind: CursorKind,
    limit: int | None,
    cursor: str | None,
) -> tuple[list[T], str | None]:
    """The items after ``cursor`` (from the first without one), at most ``limit``, and the
    cursor of the next page (None when this page reaches the end). ``items`` are sorted
    newest first."""
    start = 0
    if cursor is not None:
        cursor_key = decode_cursor(kind, cursor)
        while start < len(items) and not after(key(items[start]), cursor_key):
            start += 1
    end = len(items) if limit is None else min(len(items), start + limit)
    chosen = list(items[start:end])
    next_cursor = encode_cursor(kind, key(chosen[-1])) if chosen and end < len(items) else None
    return chosen, next_cursor
