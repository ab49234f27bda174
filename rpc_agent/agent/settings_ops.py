"""Changing a session's model and thinking level: checked (``model_choice``), stored, applied.

Each change goes through the session's ``mutation``: the entry is on disk before the session's
own state changes, so a change that cannot be stored changes nothing.
"""

from __future__ import annotations

from rpc_agent.agent import model_choice
from rpc_agent.agent.core import AgentCore
from rpc_agent.protocol import events as ev
from rpc_agent.providers.base import ModelInfo

__all__ = ["cycle_model", "cycle_thinking_level", "set_model", "set_session_name", "set_thinking_level"]


async def set_model(session: AgentCore, model_id: str, provider: str | None = None) -> ModelInfo:
    model = model_choice.choose_model(session.provider, model_id, provider)
    async with session.mutation():
        await session.manager.append_model_change(model.provider, model.id)
    session.model = model
    levels = model_choice.thinking_levels(model)
    if session.thinking_level not in levels:  # as pi: clamped to what the new model takes
        await set_thinking_level(session, model_choice.clamp_thinking_level(session.thinking_level, levels))
    return model


async def cycle_model(session: AgentCore) -> ModelInfo:
    return await set_model(session, model_choice.next_model_id(session.provider, session.model))


async def set_thinking_level(session: AgentCore, level: str) -> None:
    model_choice.check_thinking_level(level)
    async with session.mutation():
        await session.manager.append_thinking_level_change(level)
    if level != session.thinking_level:
        session.thinking_level = level
        session.emit(ev.ThinkingLevelChangedEvent(level=level))


async def cycle_thinking_level(session: AgentCore) -> str:
    levels = model_choice.thinking_levels(session.model)
    level = model_choice.next_thinking_level(session.thinking_level, levels)
    if level != session.thinking_level:  # one level only (no reasoning): nothing to store
        await set_thinking_level(session, level)
    return level


async def set_session_name(session: AgentCore, name: str) -> None:
    async with session.mutation():
        await session.manager.append_session_info(name)
    session.emit(ev.SessionInfoChangedEvent(name=session.manager.session_name))
