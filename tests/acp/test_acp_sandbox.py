"""The sandbox as an ACP session config option: chosen in the editor, and bash then runs in
bubblewrap here instead of in the editor's terminal (which nothing of ours could fence)."""

from __future__ import annotations

import json

import pytest
from acp.schema import SessionConfigOptionSelect
from acp_editor import EDITOR, EditorClient
from acp_testlib import AcpWorld, JsonDict, prompt

from acp import RequestError
from rpc_agent.sandbox import bwrap

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        bwrap.unavailable_reason() is not None,
        reason=f"no sandbox here: {bwrap.unavailable_reason()} (CI installs bubblewrap)",
    ),
]


def tool_result(world: AcpWorld, call_id: str) -> str:
    for path in world.home.rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            message = json.loads(line).get("message") or {}
            if message.get("toolCallId") == call_id and message.get("role") == "toolResult":
                return "".join(block.get("text", "") for block in message["content"])
    raise AssertionError(f"no result for {call_id}")


async def test_the_sandbox_option_fences_bash_and_keeps_it_out_of_the_terminal(world: AcpWorld) -> None:
    outside = world.root / "outside.txt"
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": f"echo x > {outside}"}, "id": "b1"}]},
        {"text": "Tried."},
    ]
    client = EditorClient()
    async with world.session(client, script, capabilities=EDITOR) as (conn, sid):
        with pytest.raises(RequestError):
            await conn.set_config_option(config_id="sandbox", session_id=sid, value="everything")
        changed = await conn.set_config_option(config_id="sandbox", session_id=sid, value="workspace-write")
        options = {o.id: o for o in changed.config_options if isinstance(o, SessionConfigOptionSelect)}
        assert options["sandbox"].current_value == "workspace-write"
        assert options["sandbox_network"].current_value == "deny"
        await prompt(conn, sid, "write outside")
    assert not outside.exists()
    assert not [call for call in client.calls if call.startswith("terminal/")]
    assert "[Sandbox: writing" in tool_result(world, "b1")
