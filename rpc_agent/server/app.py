"""Wiring of the stdio server: flags -> session, provider, tools -> AgentSession -> router.

Startup stays off the slow paths: the anthropic SDK is imported by its provider on first use
(or by a background warm-up after the loop is serving), never before the first answer.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from pydantic import BaseModel

from ..agent.session import AgentSession
from ..agent.settings import AgentSettings
from ..providers.base import Provider
from ..providers.faux import FauxProvider, load_script
from ..session.files import agent_home
from ..session.store import SessionManager
from ..tools.base import Tool
from .methods import Methods, map_error
from .router import Router
from .transport import open_stdio

logger = logging.getLogger("rpc_agent")


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


_OPTIONAL_FIELDS: dict[type[BaseModel], tuple[str, ...]] = {}


def _optional_fields(cls: type[BaseModel]) -> tuple[str, ...]:
    names = _OPTIONAL_FIELDS.get(cls)
    if names is None:
        names = tuple(name for name, info in cls.model_fields.items() if not info.is_required())
        _OPTIONAL_FIELDS[cls] = names
    return names


def _drop_unset_optionals(model: BaseModel, data: dict[str, Any]) -> None:
    for name in _optional_fields(type(model)):
        if data.get(name, 0) is None:
            del data[name]
    for name, value in model.__dict__.items():
        if isinstance(value, BaseModel) and isinstance(data.get(name), dict):
            _drop_unset_optionals(value, data[name])


def event_payload(event: BaseModel) -> dict[str, Any]:
    """An event as JSON: optional fields that are None are left out, required ones never.

    ``exclude_none`` would also drop fields that are required but nullable (the ``result`` of
    an aborted ``compaction_end``, the ``leafId`` of a ``session_changed`` to the root), and
    the event would then fail its own schema. Messages inside events are plain dicts and go
    out exactly as stored.
    """
    data = event.model_dump(mode="json", warnings=False)
    _drop_unset_optionals(event, data)
    return data


def make_provider(config: ServerConfig) -> Provider:
    if config.provider == "faux":
        return FauxProvider(load_script(config.faux_script) if config.faux_script else None)
    from ..providers.anthropic import AnthropicProvider

    return AnthropicProvider()


def open_session(config: ServerConfig) -> SessionManager:
    cwd = str(config.cwd)
    if config.no_session:
        return SessionManager.in_memory(cwd)
    if config.session is not None:
        return SessionManager.open(config.session, cwd=cwd, home=config.home)
    if config.continue_recent:
        return SessionManager.continue_recent(cwd, config.session_dir, home=config.home)
    return SessionManager.create(cwd, config.session_dir, home=config.home)


def make_tools(config: ServerConfig) -> list[Tool]:
    if not config.tools:
        return []
    from ..tools import default_tools

    return default_tools()


async def serve(config: ServerConfig) -> int:
    reader, writer = open_stdio()
    manager = await anyio.to_thread.run_sync(open_session, config)
    provider = make_provider(config)
    stop = anyio.Event()
    router: Router | None = None

    def emit(event: BaseModel) -> None:
        if router is not None:
            router.notify("event", event_payload(event))

    agent = AgentSession(
        manager=manager,
        provider=provider,
        emit=emit,
        tools=lambda: make_tools(config),
        model_id=config.model,
        thinking_level=config.thinking,
        session_dir=config.session_dir,
        home=config.home,
        settings=config.settings,
    )
    methods = Methods(agent, providers=[provider.name], on_shutdown=stop.set)
    router = Router(methods.registry, writer, error_mapper=map_error)

    async def watch_signals() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _signum in signals:
                stop.set()
                return

    async def serve_until_stopped() -> None:
        assert router is not None
        await router.serve(reader)
        stop.set()

    async with writer, anyio.create_task_group() as group:
        from ..mcp import McpManager

        mcp = McpManager(group, emit, cwd=str(config.cwd), home=config.home or agent_home())
        agent.mcp = methods.mcp = mcp
        mcp.start([])
        group.start_soon(serve_until_stopped)
        group.start_soon(watch_signals)
        warm_up = getattr(provider, "warm_up", None)
        if warm_up is not None:
            group.start_soon(warm_up)
        await stop.wait()
        # EOF, SIGTERM or shutdown: abort the run and let it store what it has (the partial
        # message, the aborted tool result) and answer, then flush and close the file. The
        # session is closed only once nothing is running: a run still appending to a closed
        # session would lose its last entries.
        agent.abort()
        agent.abort_bash()
        reader.close()
        await _drain(router, 5)
        if router.cancel_all():
            await _drain(router, 5)
        await agent.shutdown()
        group.cancel_scope.cancel()
    return 0


async def _drain(router: Router, seconds: float) -> None:
    """Wait (a bounded time) until no request is running any more."""
    for _ in range(int(seconds / 0.01)):
        if not router.in_flight:
            return
        await anyio.sleep(0.01)


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


def run(config: ServerConfig) -> int:
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="rpc-agent: %(levelname)s %(message)s"
    )
    return anyio.run(serve, config, backend_options=event_loop_options())
