"""Prompt the offline provider, then print the session's tree: ``python examples/basic.py``."""

from __future__ import annotations

import anyio

from rpc_agent_client import RpcAgentClient


async def main() -> None:
    async with RpcAgentClient.spawn("--provider", "faux", "--no-session") as client:
        init = await client.initialize("basic-example")
        print(f"{init.serverInfo.name} {init.serverInfo.version}: {len(init.methods)} methods")
        result = await client.prompt("Hello, agent")
        print("stop reason:", result.stopReason)
        print("answer:", await client.get_last_assistant_text())
        for node in (await client.get_tree()).nodes:
            print("  " * node.depth + f"{node.id} {node.role or node.type}: {node.preview}")


if __name__ == "__main__":
    anyio.run(main)
