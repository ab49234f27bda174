"""Base classes shared by the protocol models, and what they say of a JSON value."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

JsonDict = dict[str, Any]
"""A JSON object as Python holds it: session entries and messages as stored, wire payloads."""


def pruned(value: Any, drop: Callable[[str, Any], bool]) -> Any:
    """A copy of a JSON value without the object members ``drop(key, value)`` says yes to, at
    every depth; the value given (an entry the store shares, say) stays as it is."""
    if isinstance(value, dict):
        return {key: pruned(item, drop) for key, item in value.items() if not drop(key, item)}
    if isinstance(value, list):
        return [pruned(item, drop) for item in value]
    return value


class Params(BaseModel):
    """Request params: unknown fields are an error (a typo should not be silently ignored)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class Result(BaseModel):
    """A method's result object."""

    model_config = ConfigDict(extra="allow", defer_build=True)


class Empty(Params):
    """No params."""


class Ok(Result):
    """A result with nothing more to say than that it worked."""
