"""Quoting input in error messages without echoing it whole.

An error that repeats what the client sent is only useful for recognising it: a 200 MB string
used as an entry id must not come back as a 200 MB (or, quoted twice, 400 MB) reply. Every error
that quotes input quotes a short prefix and says how long the whole was.
"""

from __future__ import annotations

from typing import Any

QUOTE_CHARS = 80
"""Characters of a client's value an error message or error data repeats."""
_CONTAINER_ITEMS = 20
"""Items of a list or object kept when error data repeats a container."""


def shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` itself when short, else its first ``limit`` characters and ``…(N chars)``."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text)} chars)"


def quote(value: object, limit: int = QUOTE_CHARS) -> str:
    """``repr`` of a value for an error message, cut to ``limit`` characters of the value."""
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else repr(value[:limit]) + f"…({len(value)} chars)"
    return shorten(repr(value), limit)


def bound(value: Any, limit: int = QUOTE_CHARS, depth: int = 6) -> Any:
    """A JSON-like value with every string (and object key) shortened and containers cut.

    For error data that carries input back (pydantic's ``input`` and ``loc``, an entry id):
    the result's size is bounded whatever the input was.
    """
    if isinstance(value, str):
        return shorten(value, limit)
    if isinstance(value, dict | list | tuple) and depth <= 0:
        return f"…({type(value).__name__} of {len(value)})"
    if isinstance(value, dict):
        items = list(value.items())
        result = {
            shorten(str(key), limit): bound(item, limit, depth - 1) for key, item in items[:_CONTAINER_ITEMS]
        }
        if len(items) > _CONTAINER_ITEMS:
            result["…"] = f"({len(items) - _CONTAINER_ITEMS} more keys)"
        return result
    if isinstance(value, list | tuple):
        kept = [bound(item, limit, depth - 1) for item in value[:_CONTAINER_ITEMS]]
        if len(value) > _CONTAINER_ITEMS:
            kept.append(f"…({len(value) - _CONTAINER_ITEMS} more items)")
        return kept
    return value
