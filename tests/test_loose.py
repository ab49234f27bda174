"""``Loose[shape]`` fields: typed for mypy, plain JSON objects to pydantic (schema and checks)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from rpc_agent.protocol import events as ev
from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.loose import Loose
from rpc_agent.protocol.shapes import BlockDict, EntryDict


class _Typed(BaseModel):
    entry: Loose[EntryDict]
    blocks: list[Loose[BlockDict]] | None = None


class _Plain(BaseModel):
    entry: JsonDict
    blocks: list[JsonDict] | None = None


def test_a_loose_field_has_the_schema_of_a_plain_object() -> None:
    typed = _Typed.model_json_schema()
    plain = _Plain.model_json_schema()
    assert typed["properties"] == plain["properties"]
    assert typed["properties"]["entry"]["type"] == "object"


def test_a_loose_field_keeps_keys_the_shape_does_not_name() -> None:
    entry: EntryDict = {"type": "future_type", "id": "a1", "parentId": None, "timestamp": "t"}
    raw: JsonDict = {**entry, "addedLater": [1, 2]}
    event = ev.EntryAppendedEvent.model_validate({"entry": raw})
    assert event.entry == raw
    assert event.model_dump(mode="json")["entry"]["addedLater"] == [1, 2]


def test_a_loose_field_still_wants_an_object() -> None:
    with pytest.raises(ValidationError):
        _Typed.model_validate({"entry": "not an object"})
    with pytest.raises(ValidationError):
        ev.ToolResultPayload.model_validate({"content": ["text"]})
