"""``get_state`` is answered from a typed dict built without a model (``AgentSession.state_json``);
the dict's shapes keep the fields of the protocol models the schema is generated from, and
the dict the agent really builds has those keys and validates as the ``State`` model."""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, NotRequired, Union, get_args, get_origin, get_type_hints

import pytest
from pydantic import BaseModel

from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.loose import CheckedAs
from rpc_agent.protocol.sandbox import SandboxState
from rpc_agent.protocol.state_shapes import (
    McpServerStateDict,
    ModelDescriptionDict,
    SandboxStateDict,
    StateDict,
)
from rpc_agent.providers.faux import FauxProvider
from rpc_agent.store import SessionManager


def _keys(shape: type) -> set[str]:
    return set(get_type_hints(shape))


def test_the_state_shapes_keep_the_fields_of_their_models() -> None:
    assert _keys(StateDict) == set(m.State.model_fields)
    assert _keys(ModelDescriptionDict) == set(m.ModelDescription.model_fields)
    assert _keys(McpServerStateDict) == set(m.McpServerState.model_fields)
    assert _keys(SandboxStateDict) == set(SandboxState.model_fields)


SHAPES: dict[type[BaseModel], type] = {
    m.State: StateDict,
    m.ModelDescription: ModelDescriptionDict,
    m.McpServerState: McpServerStateDict,
    SandboxState: SandboxStateDict,
}
"""Each model of ``get_state``'s result and the typed dict the agent builds in its place."""

WIDER = {(StateDict, "thinkingLevel"), (StateDict, "steeringMode"), (StateDict, "followUpMode")}
"""Fields the agent types as plain ``str`` where the model names the allowed strings (the
agent keeps the thinking level and the queue modes as ``str``)."""


def _as_shape(annotation: Any) -> Any:
    """A model's field type as the typed dict writes it: each model replaced by its shape."""
    if annotation in SHAPES:
        return SHAPES[annotation]
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:  # a field that holds the shape and is checked as the model
        (checked,) = (meta for meta in annotation.__metadata__ if isinstance(meta, CheckedAs))
        assert args[0] == SHAPES[checked.model]
        return args[0]
    if origin in (Union, types.UnionType):
        return Union[tuple(_as_shape(arg) for arg in args)]  # noqa: UP007 (rebuilt from parts)
    if origin in (list, dict):
        return origin[tuple(_as_shape(arg) for arg in args)]
    return annotation


@pytest.mark.parametrize("model", list(SHAPES), ids=lambda model: model.__name__)
def test_the_state_shapes_keep_the_types_of_their_models(model: type[BaseModel]) -> None:
    """Field by field: the shape's type is the model's (a dict key that ``exclude_none``
    leaves out is ``NotRequired`` where the model says ``X | None = None``)."""
    shape = SHAPES[model]
    hints = get_type_hints(shape, include_extras=True)
    for name, field in model.model_fields.items():
        expected = _as_shape(field.annotation)
        written = hints[name]
        if get_origin(written) is NotRequired:
            assert field.default is None, name
            written = get_args(written)[0] | None
        if (shape, name) in WIDER:
            assert written is str, name
            assert {type(value) for value in get_args(expected)} == {str}, name
            assert get_origin(expected) is Literal, name
        else:
            assert written == expected, name


def test_a_server_state_as_the_manager_dumps_it_has_the_keys_of_its_shape() -> None:
    """``McpManager.state_json`` casts ``model_dump(exclude_none=True)``: only ``error`` may be absent."""
    failed = m.McpServerState(name="s", transport="stdio", status="failed", toolCount=0, error="boom")
    ready = m.McpServerState(name="s", transport="http", status="ready", toolCount=2)
    assert set(failed.model_dump(mode="json", exclude_none=True)) == _keys(McpServerStateDict)
    assert set(ready.model_dump(mode="json", exclude_none=True)) == _keys(McpServerStateDict) - {"error"}


def test_the_state_the_agent_builds_has_the_keys_of_its_shape_and_validates() -> None:
    events: list[BaseModel] = []
    agent = AgentSession(
        manager=SessionManager.in_memory("/project"), provider=FauxProvider([]), emit=events.append
    )
    state = agent.state_json()
    assert set(state) == _keys(StateDict)
    assert state["model"] is not None
    assert set(state["model"]) == _keys(ModelDescriptionDict)
    assert set(state["sandbox"]) == _keys(SandboxStateDict)
    validated = m.State.model_validate(state)
    assert validated.cwd == "/project"
    assert validated.model is not None
    assert validated.model["id"] == state["model"]["id"]
    assert validated.model_dump(mode="json", exclude_none=False) == state


def test_a_state_without_a_sandbox_holds_the_defaults_of_the_sandbox_model() -> None:
    events: list[BaseModel] = []
    agent = AgentSession(
        manager=SessionManager.in_memory("/project"), provider=FauxProvider([]), emit=events.append
    )
    fields = {name: value for name, value in agent.state_json().items() if name != "sandbox"}
    assert m.State.model_validate(fields).sandbox == SandboxState().model_dump()
