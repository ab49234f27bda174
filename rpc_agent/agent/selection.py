"""Keeping the live thinking level (and a new session's model) recorded on the current branch.

The file is what a reopen reads: ours and pi's both take the thinking level from the last
``thinking_level_change`` on the path to the leaf. Two gaps would make a reopen differ from
the live session, and pi 1.5 closes both:

* a new session starts with a ``model_change`` and a ``thinking_level_change`` (pi writes
  them when it creates the session; pi 1.5 also appends the level to a file that has
  messages but none on its branch, merely by opening it). We write them before the first
  prompt's message, so a session of ours opened in pi gets nothing appended;
* after ``navigate_tree`` to a point before a level change, the branch implies another
  level than the live one. pi 1.5.1 (#11451) records the live level on the new branch with
  the next prompt; we record it when the navigation lands as well, so that a reopen right
  after it also shows the live level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpc_agent.agent.settings import AgentSettings
from rpc_agent.store.context import SessionContext

if TYPE_CHECKING:
    from rpc_agent.agent.core import AgentCore


def opening_level(context: SessionContext, settings: AgentSettings) -> str:
    """The level a session opens with: the one its branch records, else the settings' default
    (``defaultThinkingLevel``), else off."""
    if context.thinkingLevelRecorded:
        return context.thinkingLevel
    return settings.default_thinking_level or "off"


async def record_before_prompt(session: AgentCore) -> None:
    """Before a run's first message: the initial entries of a new session, the live level on a
    branch that records none, or the live level where the branch records another."""
    manager = session.manager
    settings = manager.context_settings()
    if not settings.thinkingLevelRecorded:
        if manager.tree_cursor == 0:  # nothing written yet: a new session
            await manager.append_model_change(session.model.provider, session.model.id)
        await manager.append_thinking_level_change(session.thinking_level)
    elif settings.thinkingLevel != session.thinking_level:
        await manager.append_thinking_level_change(session.thinking_level)


async def record_after_navigation(session: AgentCore) -> None:
    """After the leaf moved: the live level, when the new branch implies another one (a branch
    that records none implies "off", as a reopen reads it)."""
    settings = session.manager.context_settings()
    if settings.thinkingLevel != session.thinking_level:
        await session.manager.append_thinking_level_change(session.thinking_level)
