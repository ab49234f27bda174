"""Asking the editor before a tool runs: ``session/request_permission`` with a diff preview.

Whether to ask is the agent's approval policy (``writes``, ``all`` or ``never``, chosen per
session with the ``approval_policy`` config option); an ``allow_always`` answer lets that tool
run unasked for the rest of the session. A write or edit shows the change it would make, both
on the question and on the tool call itself, so the editor can offer "view diff".
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio.lowlevel
from acp.interfaces import Client
from acp.schema import PermissionOption, ToolCallUpdate

from acp import RequestError, update_tool_call
from rpc_agent.acp.preview import file_change
from rpc_agent.acp.session_state import AcpSession
from rpc_agent.acp.updates import tool_kind, tool_title
from rpc_agent.agent.policy import ApprovalMode
from rpc_agent.tools.access import DiskFiles

logger = logging.getLogger("rpc_agent.acp")


APPROVAL_POLICIES: dict[ApprovalMode, tuple[str, str]] = {
    "writes": ("Ask before changes", "Ask before write, edit and bash; other tools only read"),
    "all": ("Ask for every tool", "Ask before every tool call"),
    "never": ("Never ask", "Run every tool call without asking"),
}
"""The ``approval_policy`` config option's values, with their names and descriptions."""

PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
]


def needs_permission(session: AcpSession, name: str, args: Mapping[str, Any]) -> bool:
    """Tools that change the machine ask first: the built-in ones that do, and MCP tools
    unless their server marks them read-only (the agent's policy, as the JSON-RPC front's)."""
    agent = session.agent
    tool = next((t for t in agent.run_tools() if t.name == name), None)
    if tool is None:  # the agent authorizes only tools it has
        return session.policy.mode != "never" and name not in session.policy.always_allowed
    return session.policy.decide(tool, args, Path(agent.manager.cwd)).verdict == "ask"


async def authorize(
    session: AcpSession, client: Callable[[], Client], call_id: str, name: str, args: Mapping[str, Any]
) -> bool:
    """May this tool call run? Shows the change first, asks the editor when the policy says so."""
    allowed = True
    agent = session.agent
    change = await file_change(name, args, agent.manager.cwd, agent.files or DiskFiles())
    content = [change.diff()] if change is not None else None
    locations = [change.location()] if change is not None else None
    if change is not None:
        session.translator.diffs[call_id] = change.diff()
        session.push(update_tool_call(call_id, content=content, locations=locations))
    if needs_permission(session, name, args):
        await session.flush()  # the client sees the tool call before the question about it
        try:
            response = await client().request_permission(
                session_id=session.id,
                tool_call=ToolCallUpdate(
                    tool_call_id=call_id,
                    title=tool_title(name, args),
                    kind=tool_kind(name),
                    status="pending",
                    raw_input=args,
                    content=content,
                    locations=locations,
                ),
                options=PERMISSION_OPTIONS,
            )
        except ConnectionError:
            # The editor is gone and nobody will answer: stop the run (stored as aborted).
            session.cancel()
            await anyio.lowlevel.checkpoint()
            allowed = False
        except RequestError as exc:
            logger.warning("session/request_permission failed: %s", exc)
            allowed = False
        else:
            outcome = response.outcome
            chosen = getattr(outcome, "option_id", None) if outcome.outcome == "selected" else None
            allowed = chosen in ("allow_once", "allow_always")
            if chosen == "allow_always":
                session.policy.always_allowed.add(name)
    if allowed:
        session.push(update_tool_call(call_id, status="in_progress"))
    return allowed
