"""What an editor shows beside the conversation: ``usage_update`` (context use and cumulative
cost), ``session_info_update`` (the automatic title, the last activity) and the prompt
response's ``usage``; every message checked against the 2.4.0 schema."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from acp.schema import SessionInfoUpdate, UsageUpdate
from acp_schema import SchemaCheck
from acp_testlib import WAIT, AcpWorld, RecordingClient, prompt

from rpc_agent.acp import status

pytestmark = pytest.mark.anyio


def usages(client: RecordingClient, sid: str) -> list[UsageUpdate]:
    return [u for u in client.of(sid) if isinstance(u, UsageUpdate)]


def infos(client: RecordingClient, sid: str) -> list[SessionInfoUpdate]:
    return [u for u in client.of(sid) if isinstance(u, SessionInfoUpdate)]


async def test_usage_and_the_automatic_title_reach_the_editor(world: AcpWorld) -> None:
    script = [
        {"text": "First answer.", "usage": {"input": 1200, "output": 30, "costUsd": 0.25}},
        {"text": "Second answer.", "usage": {"input": 1300, "output": 40, "costUsd": 0.5}},
    ]
    client = RecordingClient()
    check = SchemaCheck()
    async with world.session(client, script) as (conn, sid):
        check.watch(conn)
        await client.wait_for(lambda: bool(usages(client, sid)))
        (opened,) = usages(client, sid)
        assert (opened.used, opened.size) == (0, 200_000)
        assert opened.cost is not None
        assert (opened.cost.amount, opened.cost.currency) == (0, "USD")

        answer = await prompt(conn, sid, "Fix   the login\nbug")
        assert answer.stop_reason == "end_turn"
        assert answer.usage is not None
        assert (answer.usage.input_tokens, answer.usage.output_tokens, answer.usage.total_tokens) == (
            1200,
            30,
            1230,
        )
        titled, ended = infos(client, sid)
        assert titled.title == "Fix the login bug"
        assert ended.title is None
        assert ended.updated_at is not None
        # The title came as soon as the message was stored, before the answer's text.
        updates = client.of(sid)
        assert updates.index(titled) < min(
            i for i, u in enumerate(updates) if getattr(u, "session_update", "") == "agent_message_chunk"
        )
        after_call, after_prompt = usages(client, sid)[1:]
        assert (after_call.used, after_call.size) == (1230, 200_000)
        assert after_call.cost is not None
        assert after_call.cost.amount == 0.25
        assert after_prompt.used == 1230
        assert after_prompt.cost == after_call.cost

        await prompt(conn, sid, "and the logout one")
        assert [u.title for u in infos(client, sid) if u.title is not None] == ["Fix the login bug"]
        last = usages(client, sid)[-1]
        assert last.cost is not None
        assert last.cost.amount == 0.75
        assert last.used == 1340

        with anyio.fail_after(WAIT):
            listed = await conn.list_sessions(cwd=str(world.cwd))
        assert [info.title for info in listed.sessions] == ["Fix the login bug"]
    assert check.problems == []
    assert {"PromptResponse", "SessionNotification"} <= set(check.checked)

    # Opened again in a fresh agent: the cost so far and the context as stored.
    client = RecordingClient()
    async with world.agent(client) as conn:
        check = SchemaCheck()
        check.watch(conn)
        with anyio.fail_after(WAIT):
            await conn.load_session(cwd=str(world.cwd), session_id=sid, mcp_servers=[])
        await client.wait_for(lambda: bool(usages(client, sid)))
        (loaded,) = usages(client, sid)
        assert loaded.cost is not None
        assert loaded.cost.amount == 0.75
        assert loaded.used == 1340
        assert infos(client, sid) == []
    assert check.problems == []


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_the_stored_cost_is_summed_across_block_boundaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    lines = [
        {"type": "session", "id": "s"},
        {"type": "message", "message": {"role": "user", "content": "hi"}},
    ]
    for cost in (0.25, 0.5, 1e-3):
        usage = {"input": 1, "output": 2, "cost": {"input": 0.1, "output": 0.2, "total": cost}}
        lines.append({"type": "message", "message": {"role": "assistant", "content": [], "usage": usage}})
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).rstrip("\n"))
    monkeypatch.setattr(status, "_BLOCK", block)
    total, has_user = status.stored_status(path)
    assert total == pytest.approx(0.751)
    assert has_user
    assert status.stored_status(tmp_path / "missing.jsonl") == (0.0, False)
