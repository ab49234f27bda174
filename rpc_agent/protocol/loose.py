"""Shapes of ``protocol.shapes`` as the types of pydantic fields.

Events and results carry entries, messages and blocks as the store holds them: typed dicts.
Pydantic cannot take those TypedDicts as field types on Python 3.11 (it wants
``typing_extensions.TypedDict``), and if it could it would check and copy every key and publish
every shape's fields in the schema, where the entry schemas already describe them. So a field
names the shape for mypy and tells pydantic what to make of it in one of two ways:

- ``Loose[EntryDict]``: any JSON object (the shape's truth is published elsewhere);
- ``Annotated[MessageDict, CheckedAs(AgentMessage)]``: checked against the models, which the
  schema publishes, and held as the dict it was (a model given is held as its JSON, without the fields it leaves None, as the store writes it). Built
  without validation (``protocol.builders``), such a field holds what its annotation says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, GetCoreSchemaHandler, GetPydanticSchema
from pydantic_core import CoreSchema, core_schema

from rpc_agent.protocol.base import JsonDict

_Shape = TypeVar("_Shape")

Loose = Annotated[_Shape, GetPydanticSchema(lambda _shape, handler: handler(JsonDict))]
"""``Loose[EntryDict]``: an ``EntryDict`` to mypy; to pydantic (validation, schema) any JSON object."""


def _held_as_given(value: Any, check: core_schema.ValidatorFunctionWrapHandler) -> Any:
    checked = check(value)
    if isinstance(checked, BaseModel) and not isinstance(value, dict):
        return checked.model_dump(mode="json", exclude_none=True)
    return value


def _as_held(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class CheckedAs:
    """``Annotated[MessageDict, CheckedAs(AgentMessage)]``: the validation and schema of
    ``model`` for a field that holds the typed dict ``model`` describes."""

    model: Any

    def __get_pydantic_core_schema__(self, _source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_wrap_validator_function(
            _held_as_given,
            handler(self.model),
            serialization=core_schema.plain_serializer_function_ser_schema(_as_held),
        )
