"""Entries the host adds to a session (pi's ``sendMessage`` and ``appendEntry``).

A custom message reaches the model: during a run it steers the run, otherwise it is stored
at once and may start a turn. A custom entry is extension state the model never sees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rpc_agent.agent.queue import QueuedCustom
from rpc_agent.agent.run_context import now_ms
from rpc_agent.protocol import builders as build
from rpc_agent.protocol import events as ev
from rpc_agent.protocol.shapes import Content, MessageDict

if TYPE_CHECKING:
    from rpc_agent.agent.core import AgentCore


async def send_custom_message(
    session: AgentCore,
    custom_type: str,
    content: Content,
    display: bool,
    details: Any,
    trigger_turn: bool,
) -> str | None:
    """A custom_message that reaches the model; with ``trigger_turn`` the model answers it.

    During a run it steers the run (stored when the next turn starts; None is returned)."""
    custom: QueuedCustom = {
        "customType": custom_type,
        "content": content,
        "display": display,
        "details": details,
    }
    if session.run_context is not None:
        session.run_context.extra_first.append(custom)
        return None
    session.require_idle("add a custom message")
    entry_id = await session.manager.append_custom_message_entry(custom_type, content, display, details)
    message: MessageDict = {
        "role": "custom",
        "customType": custom_type,
        "content": content,
        "display": display,
        "details": details,
        "timestamp": now_ms(),
    }
    session.emit(build.message_start(message))
    session.emit(build.message_end(message, entry_id))
    if trigger_turn:
        await session.run([])
    return entry_id


async def append_custom_entry(session: AgentCore, custom_type: str, data: Any) -> str | None:
    """Extension state: stored in the session, never sent to the model. No message event
    tells of it, so ``entry_appended`` does, once it is on disk (pi's ``appendEntry``)."""
    manager = session.manager
    entry_id = await manager.append_custom_entry(custom_type, data)
    await manager.flush()
    entry = manager.get_entry(entry_id) if entry_id else None
    if entry is not None:
        session.emit(ev.EntryAppendedEvent(entry=entry))
    return entry_id
