"""What one run carries (``RunContext``) and the one way its messages reach the session.

The turn loop (``loop.py``) and the tool calls (``tool_calls.py``) both store messages through
``append_and_announce``: the entry is on disk before its ``message_end`` event goes out.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import BaseModel

from rpc_agent.agent.host import Host
from rpc_agent.agent.queue import MessageQueue, QueuedCustom
from rpc_agent.agent.settings import AgentSettings
from rpc_agent.agent.structured import StructuredRun
from rpc_agent.errors import ProviderError
from rpc_agent.protocol import builders as build
from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.shapes import BlockDict, MessageDict
from rpc_agent.providers.base import Provider, ProviderRequest
from rpc_agent.sandbox import Sandbox
from rpc_agent.store.blobs import stage_images
from rpc_agent.store.durability import PendingAppend
from rpc_agent.store.manager import SessionManager
from rpc_agent.tools.base import CommandRunner, FileAccess, Tool
from rpc_agent.tools.reaper import Reaper
from rpc_agent.tools.temp_files import UNOWNED, TempFiles

if TYPE_CHECKING:
    from rpc_agent.agent.checkpointing import Checkpointing

Emit = Callable[[BaseModel], None]
Authorize = Callable[[str, str, JsonDict], Awaitable[bool]]
"""``authorize(tool_call_id, tool_name, args)``: may this tool call run? (a front asks its user)"""


def now_ms() -> int:
    return int(time.time() * 1000)


def user_message(text: str, images: list[BlockDict] | None = None) -> MessageDict:
    if images:
        return {"role": "user", "content": [{"type": "text", "text": text}, *images], "timestamp": now_ms()}
    return {"role": "user", "content": text, "timestamp": now_ms()}


@dataclass
class RunContext:
    """What one run needs; built by AgentSession for each prompt."""

    manager: SessionManager
    provider: Provider
    request: ProviderRequest
    """Each model call of the run, but for its messages (the session's context at that call):
    the model, system prompt, tool specs, thinking level and a tool the model must call."""
    tools: list[Tool]
    settings: AgentSettings
    queue: MessageQueue
    emit: Emit
    cwd: Any
    on_queue_change: Callable[[], None] = lambda: None
    abort_retry: anyio.Event = field(default_factory=anyio.Event)
    retry_waiting: bool = False
    """True while the loop waits before an automatic retry (what ``abort_retry`` can stop)."""
    stream_error: ProviderError | None = None
    """The classified failure of the last stream that ended with an ``error`` event."""
    new_messages: list[MessageDict] = field(default_factory=list)
    authorize: Authorize | None = None
    """Asked before every tool call with valid arguments; None allows everything."""
    files: FileAccess | None = None
    """How the file tools reach files; None: the disk."""
    commands: CommandRunner | None = None
    """Where ``bash`` runs; None: a local process."""
    session_folders: tuple[Path, ...] | None = None
    """The session store's folders, closed to the tools' writes (None: the default home's)."""
    sandbox: Sandbox | None = None
    """The kernel sandbox of the run's commands (None: off)."""
    temp_files: TempFiles = UNOWNED
    """Where tools register the files they leave behind (removed with the session)."""
    reaper: Reaper | None = None
    """Kills the commands' process groups if the process is killed; None: no such guard."""
    host: Host | None = None
    """The host's hooks (tool_call, tool_result, context); None: no hooks."""
    max_turns: int | None = None
    """Per-prompt limit of model calls (None: the settings' safety stop)."""
    max_budget_usd: float | None = None
    """Per-prompt limit of the cost of the run's model calls."""
    extra_first: list[QueuedCustom] = field(default_factory=list)
    """Custom messages (before_agent_start) stored right after the prompt's first messages."""
    checkpoints: Checkpointing | None = None
    """Snapshots after user messages and tools that may change files; None: none."""
    structured: StructuredRun | None = None
    """The answer in a schema this run must end with (``agent.structured``); None: any answer."""


class RunOutcome:
    def __init__(self) -> None:
        self.stop_reason: str | None = None
        self.error_message: str | None = None
        self.overflow: bool = False


async def append_and_announce(
    ctx: RunContext, message: MessageDict, *, announce_start: bool = True
) -> str | None:
    """Store a message durably, then tell the client (message_start/message_end).

    With ``announce_start=False`` the caller sent ``message_start`` already (while streaming):
    the message gets its ``message_end`` whatever happens, without ``entryId`` when it could
    not be stored.
    """
    pending: PendingAppend | None = None
    try:
        await stage_images(message, ctx.manager.blobs)  # big images: stored off the event loop
        pending = ctx.manager.append_message(message)
        entry_id = await pending
    except anyio.get_cancelled_exc_class():
        if pending is None:
            raise
        # Only the wait was cancelled: the line is queued and the run's final flush writes it.
        ctx.new_messages.append(message)
        if announce_start:
            ctx.emit(build.message_start(message))
        ctx.emit(build.message_end(message, pending.id))
        raise
    except BaseException:
        if not announce_start:
            ctx.emit(build.message_end(message))
        raise
    ctx.new_messages.append(message)
    if announce_start:
        ctx.emit(build.message_start(message))
    ctx.emit(build.message_end(message, entry_id))
    return entry_id
