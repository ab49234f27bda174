"""The host governs the agent: approve writes, answer a hook, give the model a tool.

python clients/python/examples/host.py      (offline: the faux provider)
"""

from typing import Any

import anyio

from rpc_agent_client import RpcAgentClient


def approve(request: dict[str, Any]) -> dict[str, Any]:
    print("approve?", request["toolName"], request.get("preview"))
    return {"decision": "deny", "message": "read-only session"}


def clock(zone: str) -> str:
    return f"12:00 in {zone}"


async def main() -> None:
    async with RpcAgentClient.spawn("--provider", "faux", "--no-session") as agent:
        agent.on_approval(approve)
        agent.on_hook("session_before_tree", lambda event: {"summary": {"summary": "Tried X; moving on."}})
        agent.on_hook(
            "tool_call", lambda e: {"block": True, "reason": "no rm"} if "rm " in str(e["input"]) else None
        )
        agent.add_tool(
            clock, parameters={"type": "object", "properties": {"zone": {"type": "string"}}}, read_only=True
        )
        init = await agent.initialize()
        print("accepted:", init.client)
        result = await agent.prompt("What time is it in Paris?")
        print(result.stopReason, await agent.get_last_assistant_text())


anyio.run(main)
