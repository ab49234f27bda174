"""ACP ``session/delete``: advertised, served with the JSON-RPC front's deletion, refusing what
it must. The SDK's client side has no call for it, so it goes out as a raw request."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from acp.client.connection import ClientSideConnection
from acp.schema import DeleteSessionResponse
from acp_testlib import WAIT, AcpWorld, RecordingClient, prompt

from acp import PROTOCOL_VERSION, RequestError
from rpc_agent.protocol.errors import SESSION_LOCKED
from rpc_agent.store import SessionManager

pytestmark = pytest.mark.anyio

# The agent runs in the test's event loop (conftest.py): a lock the test takes meets the
# agent's as another process's would (``flock`` conflicts between two opens).


async def delete(conn: ClientSideConnection, session_id: str) -> Any:
    with anyio.fail_after(WAIT):
        return await conn._conn.send_request("session/delete", {"sessionId": session_id})


async def refused(conn: ClientSideConnection, session_id: str, code: int) -> RequestError:
    with pytest.raises(RequestError) as caught:
        await delete(conn, session_id)
    assert caught.value.code == code, caught.value.to_error_obj()
    return caught.value


async def test_session_delete_removes_a_closed_session_and_refuses_open_locked_and_unknown_ones(
    world: AcpWorld,
) -> None:
    client = RecordingClient()
    async with world.agent(client) as conn:
        with anyio.fail_after(WAIT):
            init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        capabilities = init.agent_capabilities
        assert capabilities is not None
        assert capabilities.session_capabilities is not None
        assert capabilities.session_capabilities.delete is not None

        with anyio.fail_after(WAIT):
            doomed = (await conn.new_session(cwd=str(world.cwd))).session_id
            await prompt(conn, doomed, "soon gone")
            held = (await conn.new_session(cwd=str(world.cwd))).session_id
            await prompt(conn, held, "held by someone else")
            open_one = (await conn.new_session(cwd=str(world.cwd))).session_id
            await prompt(conn, open_one, "still open")
            await conn.close_session(session_id=doomed)
            await conn.close_session(session_id=held)
        files = {path.stem.rsplit("_", 1)[1]: path for path in world.home.rglob("*.jsonl")}

        error = await refused(conn, open_one, -32600)
        assert "close it" in str(error.data)
        await refused(conn, "no-such-session", -32002)
        holder = SessionManager.open(files[held], home=world.home)  # the lock another writer would hold
        try:
            await refused(conn, held, SESSION_LOCKED)
        finally:
            holder.close()

        assert DeleteSessionResponse.model_validate(await delete(conn, doomed)) == DeleteSessionResponse()
        assert not files[doomed].exists()
        await delete(conn, held)
        with anyio.fail_after(WAIT):
            listed = await conn.list_sessions(cwd=str(world.cwd))
        assert [info.session_id for info in listed.sessions] == [open_one]
        await refused(conn, doomed, -32002)  # gone for good
