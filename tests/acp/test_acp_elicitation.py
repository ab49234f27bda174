"""An MCP server asks the user (``elicitation/create``): the editor is asked through ACP
elicitation in the modes it advertised, secrets never go through a form, and an editor that
offers no elicitation has the server's question declined. The server is a real process over
stdio (``tests/mcp_servers/eliciting_*server.py``): the SDK's FastMCP where the editor answers
every kind of question, answered by hand (no second of SDK imports) in the other tests."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp.schema import (
    AcceptElicitationResponse,
    ClientCapabilities,
    DeclineElicitationResponse,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationFormSessionMode,
    ElicitationUrlCapabilities,
    ElicitationUrlSessionMode,
    McpServerStdio,
)
from acp_schema import SchemaCheck
from acp_testlib import AcpWorld, JsonDict, RecordingClient, content_text, prompt

from acp import text_block
from rpc_agent.mcp.elicitation import asks_for_secret

pytestmark = pytest.mark.anyio

SERVERS = Path(__file__).parents[1] / "mcp_servers"
FORM_AND_URL = ClientCapabilities(
    elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities(), url=ElicitationUrlCapabilities())
)


def eliciting(*, sdk: bool = False) -> McpServerStdio:
    """The server, written with the SDK (``sdk``) or by hand."""
    script = SERVERS / ("eliciting_sdk_server.py" if sdk else "eliciting_server.py")
    return McpServerStdio(name="acct", command=sys.executable, args=[str(script)], env=[])


def call(tool: str, call_id: str) -> JsonDict:
    return {"toolCalls": [{"name": f"mcp__acct__{tool}", "arguments": {}, "id": call_id}]}


@dataclass
class ElicitedClient(RecordingClient):
    """A client that shows elicitations and answers them from a list."""

    replies: list[Any] = field(default_factory=list)
    asked: list[tuple[str, Any, dict[str, Any]]] = field(default_factory=list)

    completed: list[str] = field(default_factory=list)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.asked.append((message, mode, kwargs))
        self._note_change()
        return self.replies.pop(0)

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        self.completed.append(elicitation_id)
        self._note_change()


async def test_the_editor_answers_form_and_url_elicitations_and_never_sees_a_password_form(
    world: AcpWorld,
) -> None:
    script = [
        call("ask_profile", "t1"),
        call("ask_password", "t2"),
        call("connect_account", "t3"),
        {"text": "ok"},
    ]
    client = ElicitedClient(
        replies=[
            AcceptElicitationResponse(action="accept", content={"name": "Ada", "language": "rust"}),
            AcceptElicitationResponse(action="accept"),
        ]
    )
    check = SchemaCheck()
    async with world.agent(client, script, capabilities=FORM_AND_URL) as conn:
        check.watch(conn)
        sid = (await conn.new_session(cwd=str(world.cwd), mcp_servers=[eliciting(sdk=True)])).session_id
        answer = await prompt(conn, sid, "set me up")
        assert answer.stop_reason == "end_turn"
        # The server said the sign-in it sent the user to was done: passed on under our id.
        await client.wait_for(lambda: client.completed == ["acct/oauth-42"])

    (form_message, form, meta), (url_message, url, _) = client.asked
    assert form_message == "Who are you?"
    assert isinstance(form, ElicitationFormSessionMode)
    assert (form.session_id, form.tool_call_id) == (sid, "t1")
    assert form.requested_schema.properties is not None
    assert set(form.requested_schema.properties) == {"name", "language"}
    assert meta == {"rpc-agent": {"mcpServer": "acct"}}
    assert 'accept {"language": "rust", "name": "Ada"}' in content_text(client.tool_updates(sid, "t1")[-1])

    # The password form was never shown: the server heard "decline".
    assert content_text(client.tool_updates(sid, "t2")[-1]).strip() == "decline"

    assert url_message == "Sign in to Example"
    assert isinstance(url, ElicitationUrlSessionMode)
    assert (str(url.url), url.elicitation_id, url.tool_call_id) == (
        "https://example.com/connect?e=42",
        "acct/oauth-42",
        "t3",
    )
    assert content_text(client.tool_updates(sid, "t3")[-1]).strip() == "accept"
    assert {"CreateElicitationRequest", "CompleteElicitationNotification"} <= set(check.checked)
    assert check.problems == []


async def test_modes_the_editor_did_not_offer_are_declined_without_asking(world: AcpWorld) -> None:
    script = [call("ask_profile", "t1"), call("connect_account", "t2"), {"text": "ok"}]
    form_only = ClientCapabilities(elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities()))
    client = ElicitedClient(replies=[DeclineElicitationResponse(action="decline")])
    async with world.agent(client, script, capabilities=form_only) as conn:
        sid = (await conn.new_session(cwd=str(world.cwd), mcp_servers=[eliciting()])).session_id
        await prompt(conn, sid, "set me up")
    assert [type(mode) for _, mode, _ in client.asked] == [ElicitationFormSessionMode]
    assert content_text(client.tool_updates(sid, "t1")[-1]).strip() == "decline"
    assert content_text(client.tool_updates(sid, "t2")[-1]).strip() == "decline"

    plain = ElicitedClient()
    async with world.agent(plain, [call("ask_profile", "t1"), {"text": "ok"}]) as conn:
        sid = (await conn.new_session(cwd=str(world.cwd), mcp_servers=[eliciting()])).session_id
        await prompt(conn, sid, "set me up")
    assert plain.asked == []
    assert content_text(plain.tool_updates(sid, "t1")[-1]).strip() == "decline"


async def test_a_cancelled_prompt_withdraws_the_question(world: AcpWorld) -> None:
    never = anyio.Event()

    @dataclass
    class SlowClient(ElicitedClient):
        async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
            self.asked.append((message, mode, kwargs))
            self._note_change()
            await never.wait()

    client = SlowClient()
    async with world.agent(
        client, [call("ask_profile", "t1"), {"text": "ok"}], capabilities=FORM_AND_URL
    ) as conn:
        sid = (await conn.new_session(cwd=str(world.cwd), mcp_servers=[eliciting()])).session_id
        reasons: list[str] = []

        async def run() -> None:
            reasons.append((await conn.prompt(session_id=sid, prompt=[text_block("go")])).stop_reason)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                await client.wait_for(lambda: bool(client.asked))
                await conn.cancel(session_id=sid)
        assert reasons == ["cancelled"]


@pytest.mark.parametrize(
    ("schema", "secret"),
    [
        ({"properties": {"password": {"type": "string"}}}, True),
        ({"properties": {"pw": {"type": "string", "format": "password"}}}, True),
        ({"properties": {"key": {"type": "string", "title": "Your API key"}}}, True),
        ({"properties": {"gh": {"type": "string", "description": "A GitHub access token"}}}, True),
        ({"properties": {"token": {"type": "string"}}}, True),
        ({"properties": {"limit": {"type": "integer", "description": "max tokens to use"}}}, False),
        ({"properties": {"name": {"type": "string"}, "email": {"type": "string"}}}, False),
        ({}, False),
    ],
)
def test_which_forms_ask_for_a_secret(schema: JsonDict, secret: bool) -> None:
    assert asks_for_secret(schema) is secret
