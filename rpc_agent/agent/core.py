"""What the feature modules beside AgentSession may use of it: its public interface.

Switching, navigation, compaction, the user's bash, custom entries and a run's set-up take an
``AgentCore``: they import this protocol, not ``session.py``, which imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Protocol

import anyio
from pydantic import BaseModel

from rpc_agent.agent.approvals import ApprovalGate
from rpc_agent.agent.checkpointing import Checkpointing
from rpc_agent.agent.host import Host
from rpc_agent.agent.queue import MessageQueue, QueuedMessage
from rpc_agent.agent.run_context import Authorize, RunContext
from rpc_agent.agent.sandboxing import SessionSandbox
from rpc_agent.agent.settings import AgentSettings
from rpc_agent.io.background import Background
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.state_shapes import McpServerStateDict
from rpc_agent.providers.base import ModelInfo, Provider
from rpc_agent.store.manager import SessionManager
from rpc_agent.tools.base import CommandRunner, FileAccess, Tool
from rpc_agent.tools.reaper import Reaper
from rpc_agent.tools.temp_files import TempFiles

__all__ = ["AgentCore", "SessionTools"]


class SessionTools(Protocol):
    """Tools that live and die with the session (its MCP servers), beside the built-in ones."""

    async def ready(self) -> None: ...
    def tools(self) -> list[Tool]: ...
    def state_json(self) -> list[McpServerStateDict]: ...
    async def aclose(self) -> None: ...


class AgentCore(Protocol):
    """AgentSession as its feature modules see it (see ``session.py`` for each member)."""

    manager: SessionManager
    provider: Provider
    model: ModelInfo
    thinking_level: str
    settings: AgentSettings
    emit: Callable[[BaseModel], None]
    host: Host
    authorize: Authorize | None
    files: FileAccess | None
    commands: CommandRunner | None
    client_tools: list[Tool]
    mcp: SessionTools | None
    temp_files: TempFiles
    sandbox: SessionSandbox
    queue: MessageQueue
    session_dir: Path | None
    home: Path | None
    background: Background | None
    reaper: Reaper | None
    on_opened: Callable[[], None] | None
    max_turns: int | None
    max_budget_usd: float | None
    system_prompt_override: str | None
    append_system_prompt: str | None
    is_streaming: bool
    is_compacting: bool
    operation: str | None
    op_scope: anyio.CancelScope | None
    run_context: RunContext | None
    gate: ApprovalGate
    checkpoints: Checkpointing

    @property
    def tools(self) -> list[Tool]: ...

    def run_tools(self) -> list[Tool]: ...

    def require_idle(self, what: str) -> None: ...

    def mutation(self) -> AbstractAsyncContextManager[None]: ...

    def announce_queue(self) -> None: ...

    async def run(
        self, first: list[QueuedMessage], *, max_turns: int | None = None, max_budget_usd: float | None = None
    ) -> m.PromptResult: ...
