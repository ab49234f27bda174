"""A small typed async client for rpc-agent: spawn the server, call methods, read events.

    async with RpcAgentClient.spawn("--provider", "faux") as client:
        await client.initialize()
        result = await client.prompt("hello")
        tree = await client.get_tree()

Framing is strict: one JSON value per LF-terminated line, never split on U+2028/U+2029.
When the server exits, every pending call fails with ``ServerExitedError``.

The parts, each importing only the ones after it: ``_client`` (the typed method calls),
``_host`` (approvals, hooks, client tools), ``_connection`` (the process, framing, ids and
events), ``_errors``; ``types`` is generated from ``protocol/schema.json``.
"""

from rpc_agent_client._client import QueueMode, RpcAgentClient, ThinkingLevel
from rpc_agent_client._errors import RpcCallError, ServerExitedError

__all__ = ["QueueMode", "RpcAgentClient", "RpcCallError", "ServerExitedError", "ThinkingLevel"]
