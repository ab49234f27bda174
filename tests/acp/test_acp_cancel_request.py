"""``$/cancel_request``: the named request stops and is still answered, as ACP's cancellation
page asks (``session/prompt`` with stop reason ``cancelled``, anything else with -32800)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from acp.connection import StreamDirection, StreamEvent
from acp_schema import SchemaCheck
from acp_testlib import WAIT, AcpWorld, RecordingClient, cancelled_midway

from acp import text_block

pytestmark = pytest.mark.anyio

REQUEST_CANCELLED = -32800


async def test_cancel_request_stops_a_prompt_which_answers_cancelled(world: AcpWorld) -> None:
    slow = " ".join(f"word{i}" for i in range(200))
    client = RecordingClient()
    check = SchemaCheck()
    async with world.session(client, [{"text": slow, "delayMs": 50}]) as (conn, sid):
        check.watch(conn)
        prompt_ids: list[Any] = []

        def note(event: StreamEvent) -> None:
            if (
                event.direction == StreamDirection.OUTGOING
                and event.message.get("method") == "session/prompt"
            ):
                prompt_ids.append(event.message["id"])

        conn._conn.add_observer(note)
        # What a current client sends (the 0.12.1 SDK has no method for it).
        stop_reasons = await cancelled_midway(
            conn,
            client,
            sid,
            lambda: conn._conn.send_notification("$/cancel_request", {"requestId": prompt_ids[0]}),
        )
        assert stop_reasons == ["cancelled"]
        assert client.agent_text(sid) != slow

        # A cancel for a request already answered changes nothing; the session goes on.
        await conn._conn.send_notification("$/cancel_request", {"requestId": prompt_ids[0]})
        with anyio.fail_after(WAIT):
            answer = await conn.prompt(session_id=sid, prompt=[text_block("still there?")])
        assert answer.stop_reason == "end_turn"
        assert client.agent_text(sid).endswith("Echo: still there?")
    assert "session/prompt" not in check.asked.values()
    assert "PromptResponse" in check.checked
    assert check.problems == []
    log = world.logs[-1].read_text()
    assert "Method not found" not in log
    assert "Traceback" not in log


async def _raw(
    world: AcpWorld, lines: list[dict[str, Any]], answers: int
) -> tuple[list[dict[str, Any]], str]:
    """Write ``lines`` to ``rpc-agent --acp`` in one write, read ``answers`` answers: served in
    the test's event loop over OS pipes (``AcpWorld.raw``), where one write is one read as for
    a process."""
    async with world.raw() as served:
        served.writer.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        await served.writer.drain()
        with anyio.fail_after(WAIT):
            seen = [json.loads(await served.reader.readline()) for _ in range(answers)]
    assert served.code == [0]
    return seen, world.logs[-1].read_text()


async def test_a_request_cancelled_before_it_ran_is_answered_request_cancelled(world: AcpWorld) -> None:
    """The cancel arrives in the same read as its request, before the handler ever ran."""

    def request(request_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}

    def cancel(request_id: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request_id}}

    seen, log = await _raw(
        world,
        [
            request(0, "initialize", {"protocolVersion": 1}),
            request("a", "session/list", {}),
            cancel("a"),
            cancel(12345),  # never asked: ignored
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": None}},
            {"jsonrpc": "2.0", "method": "$/progress", "params": {}},  # optional: ignored
            request(1, "session/list", {}),
        ],
        answers=3,
    )
    by_id = {message["id"]: message for message in seen}
    assert "result" in by_id[0]
    assert by_id["a"]["error"]["code"] == REQUEST_CANCELLED
    assert by_id[1]["result"] == {"sessions": []}
    assert "Method not found" not in log
    assert "Traceback" not in log
