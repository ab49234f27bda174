"""``rpc-agent --acp``: the Agent Client Protocol (v1) front, for editors (Zed, JetBrains, ...).

It speaks ACP over stdio with the official SDK (``agent-client-protocol``, module ``acp``) and
drives the same AgentSession and session files as the JSON-RPC server. Imported only when
``--acp`` is given: the JSON-RPC server's startup never pays for the SDK.
"""

from __future__ import annotations

import logging
import sys

import anyio
from acp.agent.connection import AgentSideConnection

from rpc_agent.acp.agent import RpcAgentAcp
from rpc_agent.acp.routes import add_missing_routes
from rpc_agent.acp.transport import StdioTransport
from rpc_agent.runtime import ServerConfig

__all__ = ["RpcAgentAcp", "run", "serve"]


async def serve(config: ServerConfig, transport: StdioTransport | None = None) -> int:
    """Serve ACP over ``transport`` (stdin and stdout unless given) until the client goes away."""
    transport = transport or StdioTransport()
    await transport.start()
    async with anyio.create_task_group() as group:
        agent = RpcAgentAcp(config, group, transport.cancellations)
        transport.on_answer = agent.answered
        transport.on_eof = agent.stop_all
        # session/fork, session/resume and session/close are "unstable" in the SDK.
        conn = AgentSideConnection(agent, transport, listening=False, use_unstable_protocol=True)
        add_missing_routes(conn, agent)
        try:
            await conn.listen()
        finally:
            with anyio.CancelScope(shield=True):
                await conn.close()
                await agent.shutdown()
            group.cancel_scope.cancel()
    return 0


def run(config: ServerConfig) -> int:
    """Serve until the client goes away; every session is closed and its file synced when
    this returns."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="rpc-agent: %(levelname)s %(message)s"
    )
    return anyio.run(serve, config)
