"""Slash commands typed in the editor's prompt box (``/tree``, ``/compact``, ``/fork``, ...).

ACP has no methods for the tree, compaction or labels, so the editor's user reaches them as
commands, announced with ``available_commands_update``; each one is a call of the same
AgentSession API the JSON-RPC methods use, and its answer comes back as agent text.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    SessionInfoUpdate,
    TextContentBlock,
    UnstructuredCommandInput,
)

from rpc_agent.acp import rewind
from rpc_agent.acp.prompt import PromptBlock
from rpc_agent.acp.session_methods import Sessions
from rpc_agent.acp.session_state import AcpSession
from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.agent.views import TreeDict
from rpc_agent.mcp import McpManager
from rpc_agent.protocol import methods as m

Run = Callable[[Sessions, AcpSession, str], Awaitable[str]]
"""A command's body: ``run(sessions, session, rest)`` with ``rest`` the text after its name;
returns the reply the user reads."""


@dataclass(frozen=True)
class Command:
    description: str
    hint: str | None
    """What the command takes after its name, shown by the editor (None: nothing)."""
    run: Run


COMMANDS: dict[str, Command] = {}
"""The commands by name, in the order the editor lists them."""


def command(name: str, description: str, hint: str | None = None) -> Callable[[Run], Run]:
    """Register the decorated function as ``/name``."""

    def register(run: Run) -> Run:
        COMMANDS[name] = Command(description, hint, run)
        return run

    return register


def announce(session: AcpSession) -> None:
    """What a client learns about a session it now knows: its commands, then its usage."""
    commands = [
        AvailableCommand(
            name=name,
            description=found.description,
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=found.hint))
            if found.hint
            else None,
        )
        for name, found in COMMANDS.items()
    ]
    update = AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)
    session.push(update)  # held back until the client has the answer naming the session
    session.push(session.status.usage())


def slash_command(prompt: list[PromptBlock]) -> str | None:
    """``/name args`` at the start of a text block of the prompt, for a command we have.

    Editors put context (files, selections) in blocks of their own, before or after what the
    user typed, so only the block's own start counts, not the start of the joined prompt.
    """
    for block in prompt:
        if isinstance(block, TextContentBlock):
            text = block.text.strip()
            words = text[1:].split(None, 1) if text.startswith("/") else []
            if words and words[0] in COMMANDS:
                return text
    return None


async def run_command(sessions: Sessions, session: AcpSession, command: str) -> str:
    """Run ``/name args``; the reply (or why it failed) is what the user reads."""
    name, _, rest = command[1:].partition(" ")
    found = COMMANDS.get(name)
    if found is None:
        return f"Unknown command /{name}"
    try:
        return await found.run(sessions, session, rest.strip())
    except Exception as exc:
        return f"/{name} failed: {exc}"


@command("tree", "Show the conversation tree; /tree <entry-id> moves to that entry", "entry id (optional)")
async def _tree(sessions: Sessions, session: AcpSession, rest: str) -> str:
    agent = session.agent
    if rest:
        result = await agent.navigate_tree(m.NavigateTreeParams(targetId=rest))
        return f"Moved to {result.leafId or 'the root'}." + (
            f"\n\nEditor text: {result.editorText}" if result.editorText else ""
        )
    return format_tree(agent.tree())


@command("compact", "Summarize older messages to free context", "custom instructions (optional)")
async def _compact(sessions: Sessions, session: AcpSession, rest: str) -> str:
    compacted = await session.agent.compact(rest or None)
    return f"Compacted {compacted.tokensBefore} tokens into a summary."


@command("fork", "Copy this conversation (current branch) into a new session")
async def _fork(sessions: Sessions, session: AcpSession, rest: str) -> str:
    fork = await sessions.fork(session, announced=True)
    announce(fork)
    return f"Forked into session {fork.id}; load it to continue there."


@command(
    "rewind",
    "Go back to before the last prompt (or to an entry) with the files as they were then",
    "entry id (optional), force",
)
async def _rewind(sessions: Sessions, session: AcpSession, rest: str) -> str:
    return await rewind.rewind(session.agent, rest)


@command("changes", "Show the files the last prompt (or an entry) changed, with diffs", "entry id (optional)")
async def _changes(sessions: Sessions, session: AcpSession, rest: str) -> str:
    return await rewind.changes(session.agent, rest)


@command("name", "Name this session", "session name")
async def _name(sessions: Sessions, session: AcpSession, rest: str) -> str:
    if not rest:
        return "Usage: /name <session name>"
    await session.agent.set_session_name(rest)
    session.push(SessionInfoUpdate(session_update="session_info_update", title=rest))
    return f"Session named {rest!r}."


@command("label", "Label an entry of the tree (no label clears it)", "entry id and label")
async def _label(sessions: Sessions, session: AcpSession, rest: str) -> str:
    words = shlex.split(rest) if rest else []
    if not words:
        return "Usage: /label <entry-id> [label]"
    label = " ".join(words[1:]) or None
    await session.agent.set_label(words[0], label)
    return f"Label of {words[0]} {'set to ' + repr(label) if label else 'cleared'}."


@command("mcp", "Show the MCP servers: status, tool count, last error")
async def _mcp(sessions: Sessions, session: AcpSession, rest: str) -> str:
    return format_mcp(session.agent)


@command(
    "mcp-restart",
    "Restart an MCP server (all without a name) and show their status",
    "server name (optional)",
)
async def _mcp_restart(sessions: Sessions, session: AcpSession, rest: str) -> str:
    mcp = session.agent.mcp
    if isinstance(mcp, McpManager):
        await mcp.restart(rest or None)
    return format_mcp(session.agent)


def format_mcp(agent: AgentSession) -> str:
    servers = agent.mcp.state_json() if agent.mcp is not None else []
    if not servers:
        return "No MCP servers."
    return "\n".join(
        f"- {s['name']} ({s['transport']}): {s['status']}, {s['toolCount']} tools"
        + (f" ({s['error']})" if s.get("error") else "")
        for s in servers
    )


def format_tree(tree: TreeDict) -> str:
    leaf = tree["leafId"]
    lines = []
    for node in tree["nodes"]:
        if node.get("type") not in ("message", "branch_summary", "compaction"):
            continue
        marker = "*" if node["id"] == leaf else " "
        label = f" [{node['label']}]" if node.get("label") else ""
        role = node.get("role") or node.get("type")
        lines.append(
            f"{marker} {'  ' * int(node.get('depth') or 0)}{node['id']} {role}{label}: {node.get('preview')}"
        )
    return "```\n" + ("\n".join(lines) or "(empty)") + "\n```"
