"""``rpc-agent --acp``: the Agent Client Protocol (v1) front, for editors (Zed, JetBrains, ...).

It speaks ACP over stdio with the official SDK (``agent-client-protocol``, module ``acp``) and
drives the same AgentSession and session files as the JSON-RPC server. Imported only when
``--acp`` is given: the JSON-RPC server's startup never pays for the SDK.
"""

from __future__ import annotations

import logging
import os
import sys

import anyio

from acp import run_agent

from ..runtime import ServerConfig
from .agent import RpcAgentAcp
from .transport import StdioTransport

__all__ = ["RpcAgentAcp", "run", "serve"]


async def serve(config: ServerConfig, transport: StdioTransport | None = None) -> int:
    """Serve ACP over ``transport`` (stdin and stdout unless given) until the client goes away."""
    transport = transport or StdioTransport()
    await transport.start()
    async with anyio.create_task_group() as group:
        agent = RpcAgentAcp(config, group, transport.cancellations)
        transport.on_answer = agent.answered
        transport.local_methods["logout"] = agent.logout
        transport.on_eof = agent.stop_all
        try:
            # session/fork, session/resume and session/close are "unstable" in the SDK.
            await run_agent(agent, transport, use_unstable_protocol=True)
        finally:
            with anyio.CancelScope(shield=True):
                await agent.shutdown()
            group.cancel_scope.cancel()
    return 0


def run(config: ServerConfig) -> int:
    """Serve until the client goes away, then leave at once.

    Editors give an agent a short time to exit once they close its stdin (the Python SDK's
    client gives 2 s, then kills it). When ``serve`` returns, every session is closed and its
    file synced, and stdout is closed; what is left is the interpreter's own teardown of a
    large module graph, which takes a few hundred milliseconds on an idle machine and
    seconds on a loaded one. Nothing in it matters to anyone, so it is skipped.
    """
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="rpc-agent: %(levelname)s %(message)s"
    )
    code = anyio.run(serve, config)
    logging.shutdown()
    sys.stderr.flush()
    os._exit(code)
