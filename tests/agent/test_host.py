"""The agent's Host interface in-process: any front that implements it governs the agent the
same way (here a plain Python host, no JSON-RPC), and the faux model shows what it was sent."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.agent.host import ClientToolAnswer, HostCapabilities
from rpc_agent.agent.policy import parse_rules
from rpc_agent.agent.settings import AgentSettings
from rpc_agent.protocol import host as h
from rpc_agent.providers.faux import FauxProvider, FauxReply
from rpc_agent.store import SessionManager
from rpc_agent.tools import default_tools

pytestmark = pytest.mark.anyio

JsonDict = dict[str, Any]


class ScriptedHost:
    """Answers from a table; records every question."""

    def __init__(self, hooks: dict[str, JsonDict], approval: h.ApprovalResult | None) -> None:
        self.capabilities = HostCapabilities(approvals=approval is not None, hooks=set(hooks))
        self.hooks = hooks
        self.approval = approval
        self.asked: list[tuple[str, Mapping[str, Any]]] = []

    async def request_approval(self, question: h.ApprovalRequestParams) -> h.ApprovalResult | None:
        self.asked.append(("approval", {"toolName": question.toolName, "preview": question.preview}))
        return self.approval

    async def run_hook(self, name: str, event: Mapping[str, Any]) -> BaseModel | None:
        self.asked.append((name, event))
        return h.HOOK_RESULTS[name].model_validate(self.hooks[name])

    async def call_client_tool(self, tool_call_id: str, name: str, arguments: JsonDict) -> ClientToolAnswer:
        return ClientToolAnswer([{"type": "text", "text": "unused"}], True)


def make_agent(
    tmp_path: Path, script: list[FauxReply], host: ScriptedHost, approval: str
) -> tuple[AgentSession, FauxProvider]:
    provider = FauxProvider(script)
    agent = AgentSession(
        manager=SessionManager.in_memory(str(tmp_path)),
        provider=provider,
        emit=lambda _event: None,
        tools=default_tools(),
        settings=AgentSettings(approval=approval),
    )
    agent.host = host
    return agent, provider


async def test_a_python_host_denies_blocks_and_rewrites_the_context(tmp_path: Path) -> None:
    host = ScriptedHost(
        {
            "tool_call": {"block": True, "reason": "bash is off today"},
            "context": {"messages": [{"role": "user", "content": "only this", "timestamp": 1}]},
            "before_agent_start": {"systemPrompt": "host prompt"},
        },
        h.ApprovalResult(decision="deny", message="no writes"),
    )
    script: list[FauxReply] = [
        {"toolCalls": [{"name": "write", "arguments": {"path": "w.txt", "content": "x"}}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo x > b.txt"}}]},
        {"text": "done"},
    ]
    agent, provider = make_agent(tmp_path, script, host, "writes")
    agent.policy.allow = parse_rules(["bash"])
    result = await agent.prompt("go")
    assert result.stopReason == "stop"
    assert not (tmp_path / "w.txt").exists()
    assert not (tmp_path / "b.txt").exists()
    results: list[Any] = [m for m in result.messages if m["role"] == "toolResult"]
    assert "no writes" in results[0]["content"][0]["text"]
    assert results[1]["content"][0]["text"] == "bash is off today"
    # The approval comes first (write: asked and denied; bash: allowed by the rule), then the hook.
    asked = [name for name, _ in host.asked]
    assert asked.count("approval") == 1
    assert asked.count("tool_call") == 1
    assert all(request.system_prompt == "host prompt" for request in provider.requests)
    assert all(
        request.messages == [{"role": "user", "content": "only this", "timestamp": 1}]
        for request in provider.requests
    )
    await agent.shutdown()


async def test_rules_allow_and_the_hook_blocks(tmp_path: Path) -> None:
    host = ScriptedHost({"tool_call": {"block": True}}, h.ApprovalResult(decision="deny"))
    agent, _provider = make_agent(
        tmp_path,
        [{"toolCalls": [{"name": "bash", "arguments": {"command": "echo x > b.txt"}}]}, {"text": "ok"}],
        host,
        "writes",
    )
    agent.policy.allow = parse_rules(["bash(echo *)"])
    result = await agent.prompt("go")
    (tool_result,) = [m for m in result.messages if m["role"] == "toolResult"]
    content: Any = tool_result["content"]
    assert content[0]["text"] == "Tool execution was blocked by an extension"
    assert [name for name, _ in host.asked] == ["tool_call"]
    await agent.shutdown()


async def test_a_hook_message_keeps_only_the_fields_the_hook_gave(tmp_path: Path) -> None:
    """A before_agent_start message is stored with the fields the hook set, and no others:
    one without ``display``/``details`` carries neither (pi leaves undefined out)."""
    for given, expected in [
        ({"customType": "note", "content": "remember"}, {}),
        (
            {"customType": "note", "content": "remember", "display": False, "details": {"k": 1}},
            {"display": False, "details": {"k": 1}},
        ),
    ]:
        host = ScriptedHost({"before_agent_start": {"message": given}}, None)
        agent, provider = make_agent(tmp_path, [{"text": "ok"}], host, "never")
        result = await agent.prompt("go")
        (custom,) = [m for m in result.messages if m["role"] == "custom"]
        assert {k: v for k, v in custom.items() if k != "timestamp"} == {
            "role": "custom",
            "customType": "note",
            "content": "remember",
            **expected,
        }
        assert isinstance(custom["timestamp"], int)
        # The model got it after the prompt, as a user turn of its own.
        assert [m["role"] for m in provider.requests[0].messages] == ["user", "custom"]
        await agent.shutdown()


async def test_host_blocks_replace_a_result_as_the_message_holds_them(tmp_path: Path) -> None:
    """The tool_result hook's blocks become the stored result's content: the fields of each
    block, nothing a client added beside them."""
    blocks = [
        {"type": "text", "text": "rewritten", "extra": "dropped"},
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
    ]
    host = ScriptedHost({"tool_result": {"content": blocks, "isError": True}}, None)
    script: list[FauxReply] = [
        {"toolCalls": [{"name": "read", "arguments": {"path": "missing.txt"}}]},
        {"text": "done"},
    ]
    agent, _provider = make_agent(tmp_path, script, host, "never")
    result = await agent.prompt("go")
    (tool_result,) = [m for m in result.messages if m["role"] == "toolResult"]
    assert tool_result["content"] == [
        {"type": "text", "text": "rewritten"},
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
    ]
    assert tool_result["isError"] is True
    stored = agent.manager.get_branch()
    stored_results = [
        e["message"]["content"]
        for e in stored
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    assert stored_results == [tool_result["content"]]
    await agent.shutdown()


async def test_the_tool_hooks_name_the_same_call_with_the_models_arguments(tmp_path: Path) -> None:
    """tool_call and tool_result say which call, of which tool, with which input: the model's
    arguments in both, also after tool_call patched what the tool ran with (as pi's do)."""
    host = ScriptedHost(
        {"tool_call": {"input": {"path": "patched.txt", "content": "y"}}, "tool_result": {}}, None
    )
    arguments = {"path": "given.txt", "content": "x"}
    script: list[FauxReply] = [{"toolCalls": [{"name": "write", "arguments": arguments}]}, {"text": "done"}]
    agent, _provider = make_agent(tmp_path, script, host, "never")
    result = await agent.prompt("go")
    (tool_result,) = [m for m in result.messages if m["role"] == "toolResult"]
    (call_event,) = [event for name, event in host.asked if name == "tool_call"]
    (result_event,) = [event for name, event in host.asked if name == "tool_result"]
    expected = {"toolCallId": tool_result["toolCallId"], "toolName": "write", "input": arguments}
    assert {key: call_event[key] for key in expected} == expected
    assert {key: result_event[key] for key in expected} == expected
    assert (tmp_path / "patched.txt").read_text() == "y"
    assert not (tmp_path / "given.txt").exists()
    await agent.shutdown()
