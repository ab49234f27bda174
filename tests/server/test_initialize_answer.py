"""``initialize`` is answered in wire shape (``methods.answers.InitializeAnswer``) without building
``InitializeResult``: the dict keeps the model's fields, validates as the model and is what the
model would have sent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_type_hints

from pydantic import BaseModel

from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.agent.host import NoHost
from rpc_agent.methods.answers import (
    AcceptedCapabilitiesDict,
    CapabilitiesDict,
    InitializeAnswer,
    ServerInfoDict,
)
from rpc_agent.methods.handlers import Methods
from rpc_agent.methods.host_methods import configure
from rpc_agent.protocol import host as h
from rpc_agent.protocol import methods as m
from rpc_agent.providers.faux import FauxProvider
from rpc_agent.store import SessionManager
from rpc_agent.tools import default_tools
from rpc_agent.tools.base import Tool


def _methods(tools: Callable[[], list[Tool]] | None = None) -> Methods:
    events: list[BaseModel] = []
    agent = AgentSession(
        manager=SessionManager.in_memory("/project"),
        provider=FauxProvider([]),
        emit=events.append,
        tools=tools,
    )
    return Methods(agent, providers=["faux"], on_shutdown=lambda: None)


def _as_the_model_sends_it(answer: Any) -> Any:
    return m.InitializeResult.model_validate(answer).model_dump(
        mode="json", by_alias=True, exclude_none=False
    )


def test_the_initialize_shapes_keep_the_fields_of_their_models() -> None:
    assert set(get_type_hints(InitializeAnswer)) == set(m.InitializeResult.model_fields)
    assert set(get_type_hints(CapabilitiesDict)) == set(m.Capabilities.model_fields)
    assert set(get_type_hints(ServerInfoDict)) == set(m.ServerInfo.model_fields)
    assert set(get_type_hints(AcceptedCapabilitiesDict)) == set(h.AcceptedCapabilities.model_fields)


def test_the_answer_without_params_is_what_the_result_model_sends() -> None:
    methods = _methods()
    answer = methods.initialize(None)
    assert answer["client"] is None
    assert answer["methods"] == [spec.name for spec in methods.registry.methods]
    assert answer["state"] == methods.agent.state_json()
    assert _as_the_model_sends_it(answer) == answer


def test_the_answer_with_declared_capabilities_carries_what_was_accepted() -> None:
    methods = _methods()
    bridge = NoHost()
    methods.on_capabilities = lambda declared: configure(methods.agent, bridge, declared)
    params = m.InitializeParams.model_validate(
        {"capabilities": {"approvals": True, "hooks": ["tool_call", "no_such_hook"]}}
    )
    answer = methods.initialize(params)
    client = answer["client"]
    assert client is not None
    assert set(client) == set(get_type_hints(AcceptedCapabilitiesDict))
    assert (client["approvals"], client["approvalPolicy"], client["hooks"]) == (True, "writes", ["tool_call"])
    assert len(client["rejected"]) == 1
    assert "no_such_hook" in client["rejected"][0]
    assert _as_the_model_sends_it(answer) == answer


def test_capabilities_without_tools_leave_the_builtin_tools_unbuilt_until_a_client_tool_is_checked() -> None:
    """The built-in tools are built (their modules imported) to check a client tool's name
    against theirs: a client that declares approvals and hooks only does not build them."""
    built: list[int] = []

    def tools() -> list[Tool]:
        built.append(1)
        return default_tools()

    methods = _methods(tools)
    bridge = NoHost()
    methods.on_capabilities = lambda declared: configure(methods.agent, bridge, declared)
    answer = methods.initialize(m.InitializeParams.model_validate({"capabilities": {"approvals": True}}))
    assert answer["client"] is not None
    assert built == []
    declared = {"name": "read", "description": "mine", "parameters": {"type": "object"}}
    answer = methods.initialize(m.InitializeParams.model_validate({"capabilities": {"tools": [declared]}}))
    assert built == [1]
    client = answer["client"]
    assert client is not None
    assert client["tools"] == []
    assert client["rejected"] == ["tool read: the name is already taken"]
