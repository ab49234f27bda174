"""What both fronts share: the configuration, the provider, the tools, and AgentSessions built
from them. The JSON-RPC server opens one session from its flags; the ACP front opens one per
``session/new`` or ``session/load``; both get the same agent.

Start-up stays off the slow paths: the anthropic SDK is imported by its provider on first use
(or by a background warm-up once a front is serving), and the tools are built on first use.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.agent.settings import AgentSettings
from rpc_agent.errors import InvalidRequestError
from rpc_agent.io.background import Background
from rpc_agent.providers.base import Provider
from rpc_agent.providers.faux import FauxProvider, load_script
from rpc_agent.store.manager import SessionManager
from rpc_agent.tools.base import Tool
from rpc_agent.tools.reaper import Reaper

__all__ = ["Runtime", "ServerConfig"]


@dataclass(slots=True)
class ServerConfig:
    cwd: Path
    session_dir: Path | None = None
    session: Path | None = None
    continue_recent: bool = False
    no_session: bool = False
    provider: str = "anthropic"
    model: str | None = None
    thinking: str | None = None
    faux_script: Path | None = None
    tools: bool = True
    home: Path | None = None
    settings: AgentSettings | None = None
    tool_names: list[str] | None = None
    """--tools: the built-in tools the model gets (None: all of them)."""
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    on_session_opened: Callable[[], None] | None = None
    """Called each time an agent's session is opened or replaced: the command's tuning (the
    library itself leaves the collector alone)."""


class Runtime:
    """One per process: one provider (its HTTP client is shared by every session)."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.provider = make_provider(config)
        self.reaper = Reaper()
        """Shared by every session's commands; started by the first, ended by ``close``."""

    def close(self) -> None:
        """When the front is done: nothing the tools started outlives the process."""
        self.reaper.close()

    def open_session(self) -> SessionManager:
        """The session the flags name (``--session``, ``--continue``, ``--no-session``), else a
        new one; blocking file work, so fronts call it in a worker thread."""
        config = self.config
        cwd = str(config.cwd)
        if config.no_session:
            return SessionManager.in_memory(cwd)
        if config.session is not None:
            return SessionManager.open(config.session, cwd=cwd, home=config.home)
        if config.continue_recent:
            return SessionManager.continue_recent(cwd, config.session_dir, home=config.home)
        return SessionManager.create(cwd, config.session_dir, home=config.home)

    def tools(self) -> list[Tool]:
        if not self.config.tools:
            return []
        from rpc_agent.tools import default_tools

        tools = default_tools()
        names = self.config.tool_names
        if names is not None:
            unknown = set(names) - {t.name for t in tools}
            if unknown:
                raise InvalidRequestError(f"unknown tool(s) in --tools: {', '.join(sorted(unknown))}")
            tools = [t for t in tools if t.name in names]
        return tools

    def agent(
        self,
        manager: SessionManager,
        emit: Callable[[BaseModel], None],
        background: Background | None = None,
    ) -> AgentSession:
        config = self.config
        agent = AgentSession(
            manager=manager,
            provider=self.provider,
            emit=emit,
            tools=self.tools,
            model_id=config.model,
            thinking_level=config.thinking,
            session_dir=config.session_dir,
            home=config.home,
            settings=config.settings,
        )
        agent.system_prompt_override = config.system_prompt
        agent.append_system_prompt = config.append_system_prompt
        agent.background = background
        agent.reaper = self.reaper
        agent.on_opened = config.on_session_opened
        if config.on_session_opened is not None:
            config.on_session_opened()
        return agent


def make_provider(config: ServerConfig) -> Provider:
    if config.provider == "faux":
        return FauxProvider(load_script(config.faux_script) if config.faux_script else None)
    from rpc_agent.credentials import CredentialStore
    from rpc_agent.providers.anthropic import AnthropicProvider
    from rpc_agent.store.files import agent_home

    return AnthropicProvider(credentials=CredentialStore(config.home or agent_home()))


def event_loop_options() -> dict[str, Any]:
    """uvloop where it is installed (every platform but Windows): the durable append path is
    bound by event-loop wake-ups, and uvloop's are cheaper (bench/session_store.py shows both).
    ``RPC_AGENT_LOOP=asyncio`` keeps the standard loop."""
    if os.environ.get("RPC_AGENT_LOOP", "") == "asyncio":
        return {}
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return {}
    return {"use_uvloop": True}
