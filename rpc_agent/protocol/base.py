"""Base classes shared by the protocol models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

JsonDict = dict[str, Any]
"""A JSON object as Python holds it: session entries and messages as stored, wire payloads."""


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
