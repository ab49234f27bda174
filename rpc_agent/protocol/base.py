"""Base classes shared by the protocol models."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

ModelT = TypeVar("ModelT", bound=BaseModel)

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


def trusted(cls: type[ModelT], **fields: Any) -> ModelT:
    """Build a model from data that is already in its wire shape, without validating it again.

    Events and large results carry messages and entries straight from the session store,
    where they were validated when appended; re-validating every streamed delta or a
    100,000-node tree would cost more than the rest of the request. Serialize these with
    ``model_dump(mode="json", warnings=False)``.
    """
    return cls.model_construct(**fields)
