"""An MCP server asks the user for input through the JSON-RPC front: a client that declared
``elicitation`` gets the host request ``elicitation/request`` (through the typed Python
client's ``on_elicitation``) and its answer reaches the server; without the declaration the
server hears ``decline``. The MCP server is a real process over stdio, answered by hand
(``tests/mcp_servers/eliciting_server.py``; its FastMCP twin is held to the same questions in
``tests/acp/test_acp_elicitation.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from e2e.conftest import E2E, WAIT, JsonDict, start, text_of, wait_event

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]

SERVER = Path(__file__).parents[1] / "mcp_servers" / "eliciting_server.py"


def project_server(e2e: E2E) -> None:
    servers = {"mcpServers": {"acct": {"command": sys.executable, "args": [str(SERVER)]}}}
    (e2e.cwd / ".mcp.json").write_text(json.dumps(servers))


def call(tool: str, call_id: str) -> JsonDict:
    return {"toolCalls": [{"name": f"mcp__acct__{tool}", "arguments": {}, "id": call_id}]}


def results(result: JsonDict) -> list[str]:
    return [text_of(m) for m in result["messages"] if m["role"] == "toolResult"]


async def test_a_client_that_declared_elicitation_answers_the_servers_questions(e2e: E2E) -> None:
    project_server(e2e)
    script = [call("ask_profile", "t1"), call("connect_account", "t2"), {"text": "done"}]
    asked: list[JsonDict] = []

    def answer(params: JsonDict) -> Any:
        asked.append(params)
        if params["mode"] == "form":
            return {"action": "accept", "content": {"name": "Ada", "language": "go"}}
        return "cancel"

    async with e2e.server(script=script) as client:
        client.on_elicitation(answer)
        init = await client.initialize()
        assert init.client is not None
        assert init.client.elicitation is True
        result = await client.call("prompt", {"message": "set me up"})
    assert results(result) == ['accept {"language": "go", "name": "Ada"}', "cancel"]
    form, url = asked
    assert (form["server"], form["mode"], form["message"], form["toolCallId"]) == (
        "acct",
        "form",
        "Who are you?",
        "t1",
    )
    assert set(form["requestedSchema"]["properties"]) == {"name", "language"}
    assert (url["mode"], url["url"], url["elicitationId"], url["toolCallId"]) == (
        "url",
        "https://example.com/connect?e=42",
        "oauth-42",
        "t2",
    )


async def test_without_the_capability_the_server_hears_decline(e2e: E2E) -> None:
    project_server(e2e)
    async with e2e.server(script=[call("ask_profile", "t1"), {"text": "done"}]) as client:
        await client.initialize()
        result = await client.call("prompt", {"message": "set me up"})
    assert results(result) == ["decline"]


async def test_an_aborted_run_withdraws_the_question_it_was_waiting_on(e2e: E2E) -> None:
    project_server(e2e)
    asked = anyio.Event()
    withdrawn = anyio.Event()

    async def never_answer(params: JsonDict) -> Any:
        asked.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            withdrawn.set()
            raise

    async with e2e.server(script=[call("ask_profile", "t1"), {"text": "done"}]) as client:
        client.on_elicitation(never_answer)
        await client.initialize()
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:
                running = start(group, lambda: client.call("prompt", {"message": "set me up"}))
                await asked.wait()
                await client.call("abort")
                result = await running.result()
        assert result["stopReason"] == "aborted"
        failed = await wait_event(
            client, "host_request_failed", lambda e: e["method"] == "elicitation/request"
        )
        assert (failed["reason"], failed["fallback"]) == ("aborted", "declined")
        with anyio.fail_after(WAIT):
            await withdrawn.wait()  # the client was sent $/cancelRequest for it
        assert client.cancelled_requests != []
