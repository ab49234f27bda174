"""ACP ``session/load`` never opens what is not a regular file: a FIFO where a session file
would be is no session (the request fails, nothing blocks, the agent goes on serving)."""

from __future__ import annotations

import os

import anyio
import pytest
from acp_testlib import WAIT, AcpWorld, RecordingClient

from acp import RequestError
from rpc_agent.store.files import default_session_dir

pytestmark = pytest.mark.anyio

SESSION_ID = "0c0ffee0-0000-4000-8000-000000000001"


async def test_loading_a_fifo_named_like_a_session_fails_without_blocking(world: AcpWorld) -> None:
    folder = default_session_dir(str(world.cwd), world.home)
    folder.mkdir(parents=True)
    os.mkfifo(folder / f"2024-01-01T00-00-00-000Z_{SESSION_ID}.jsonl")
    client = RecordingClient()
    async with world.agent(client) as conn:
        with anyio.fail_after(WAIT), pytest.raises(RequestError):
            await conn.load_session(cwd=str(world.cwd), session_id=SESSION_ID)
        with anyio.fail_after(WAIT):
            listed = await conn.list_sessions(cwd=str(world.cwd))
            assert SESSION_ID not in {info.session_id for info in listed.sessions}
            created = await conn.new_session(cwd=str(world.cwd))
        assert created.session_id != SESSION_ID
