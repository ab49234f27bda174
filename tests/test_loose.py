"""Fields that hold typed dicts: ``Loose[shape]``, a plain JSON object to pydantic, and
``CheckedAs(model)``, checked and published as the model."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from rpc_agent.protocol import events as ev
from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.entries import AgentMessage, UserMessage
from rpc_agent.protocol.loose import Loose
from rpc_agent.protocol.shapes import BlockDict, EntryDict, MessageDict
from rpc_agent.protocol.stored import StoredMessage


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


class _Held(BaseModel):
    message: StoredMessage
    messages: list[StoredMessage] = []


class _Models(BaseModel):
    message: AgentMessage
    messages: list[AgentMessage] = []


def test_a_checked_field_publishes_the_schema_of_its_model() -> None:
    assert _Held.model_json_schema() == {**_Models.model_json_schema(), "title": "_Held"}


def test_a_checked_field_holds_the_dict_it_was_given_once_it_validates() -> None:
    message: MessageDict = {"role": "user", "content": "hi", "timestamp": 1, "later": True}  # type: ignore[typeddict-unknown-key]
    held = _Held.model_validate({"message": message, "messages": [message]})
    assert held.message is message
    assert held.messages[0] is message
    assert held.model_dump(mode="json") == {"message": message, "messages": [message]}


def test_a_checked_field_rejects_what_its_model_rejects() -> None:
    with pytest.raises(ValidationError):
        _Held.model_validate({"message": {"role": "user", "content": "hi"}})  # no timestamp
    with pytest.raises(ValidationError):
        _Held.model_validate({"message": {"role": "nobody", "content": "hi", "timestamp": 1}})


def test_a_model_given_to_a_checked_field_is_held_as_the_store_would_hold_it() -> None:
    held = _Held(message=UserMessage(content="hi", timestamp=1))
    assert held.message == {"role": "user", "content": "hi", "timestamp": 1}
