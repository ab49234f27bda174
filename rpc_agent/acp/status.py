"""What an editor shows about a session besides the conversation: context use, cost and title.

- ``usage_update``: the tokens in context (the last model call's reported usage, plus
  estimates of what came after it: the same count auto-compaction goes by), the model's
  context window, and the cumulative cost of every model call stored in the session file
  (all branches: money spent stays spent). Sent when a session is opened, after each model
  call, after a compaction and when a prompt ends, as ACP's session-usage page suggests.
- ``session_info_update``: the title ``session/list`` shows for a session without a name is
  its first user message; an editor learns it the moment that message is stored, not only
  when ``/name`` sets one. Each prompt's end also reports ``updatedAt``.
- The prompt response's ``usage`` (an unstable field of the schema): the tokens of this
  prompt's model calls.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import anyio.to_thread
from acp.schema import Cost, SessionInfoUpdate, Usage, UsageUpdate
from pydantic import BaseModel

from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.agent.compaction import context_tokens, usage_tokens
from rpc_agent.protocol import events as ev
from rpc_agent.protocol.content import message_text
from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.store.files import now_iso

TITLE_LIMIT = 200
"""Characters of the first message kept as a title (a list shows one line of it)."""


def _cost_of(message: MessageDict) -> float:
    """A stored message's cost; a file written elsewhere may hold any value there."""
    usage: object = message.get("usage")
    cost = usage.get("cost") if isinstance(usage, dict) else None
    total = cost.get("total") if isinstance(cost, dict) else None
    return float(total) if isinstance(total, int | float) and not isinstance(total, bool) else 0.0


def prompt_usage(messages: list[MessageDict]) -> Usage | None:
    """The tokens of a prompt's model calls (None when no call reported usage)."""
    totals = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    reported = False
    for message in messages:
        usage: object = message.get("usage")
        if not isinstance(usage, dict) or message.get("role") != "assistant":
            continue
        reported = True
        for key in totals:
            value = usage.get(key)
            totals[key] += (
                value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
            )
    if not reported:
        return None
    return Usage(
        total_tokens=sum(totals.values()),
        input_tokens=totals["input"],
        output_tokens=totals["output"],
        cached_read_tokens=totals["cacheRead"],
        cached_write_tokens=totals["cacheWrite"],
    )


def title_of(first_message: str) -> str:
    """A first message as a one-line title."""
    return " ".join(first_message.split())[:TITLE_LIMIT]


_COST = re.compile(rb'"usage":\{[^{}]*"cost":\{[^{}]*"total":(-?[0-9.eE+]+)')
_USER = re.compile(rb'"role":"user"')
_BLOCK = 1 << 20


def stored_status(path: Path) -> tuple[float, bool]:
    """The cost of every model call stored in a session file, and whether it holds a user
    message, read from its bytes (blocking: call it in a thread).

    Decoding every entry of a large session takes seconds, on the event loop; the usage
    objects are found in the raw lines instead, as the listing finds its counts, a megabyte of
    whole lines at a time. Only a message's ``usage`` has a ``cost`` object with a ``total``,
    written compactly by both pi and us."""
    total, has_user = 0.0, False
    pending = b""
    try:
        with path.open("rb") as handle:
            while block := handle.read(_BLOCK):
                lines = pending + block
                end = lines.rfind(b"\n") + 1
                pending = lines[end:]
                total, has_user = _scan(lines[:end], total, has_user)
    except OSError:
        return 0.0, False
    return _scan(pending, total, has_user)


def _scan(lines: bytes, total: float, has_user: bool) -> tuple[float, bool]:
    for match in _COST.finditer(lines):
        with contextlib.suppress(ValueError):
            total += float(match.group(1))
    return total, has_user or _USER.search(lines) is not None


class SessionStatus:
    """The usage and title state of one open session."""

    def __init__(self, agent: AgentSession) -> None:
        self.agent = agent
        self.cost = 0.0
        self.titled = False
        """The session already has the title a listing shows (a name, or a first message)."""

    async def load(self) -> None:
        """What the session file already holds: its cost so far, and whether it has a title."""
        manager = self.agent.manager
        path = manager.session_file
        if path is not None:
            self.cost, has_user = await anyio.to_thread.run_sync(stored_status, Path(path))
            self.titled = has_user
        self.titled = self.titled or bool(manager.session_name)

    def _update(self, used: int) -> UsageUpdate:
        return UsageUpdate(
            session_update="usage_update",
            used=max(0, used),
            size=self.agent.model.contextWindow,
            cost=Cost(amount=round(self.cost, 6), currency="USD"),
        )

    def usage(self) -> UsageUpdate:
        """The usage now, from the current branch's context."""
        return self._update(context_tokens(self.agent.manager.build_session_context().messages))

    def prompt_ended(self) -> list[UsageUpdate | SessionInfoUpdate]:
        return [self.usage(), SessionInfoUpdate(session_update="session_info_update", updated_at=now_iso())]

    def translate(self, event: BaseModel) -> list[UsageUpdate | SessionInfoUpdate]:
        """The updates an event of a running prompt brings (most bring none)."""
        if isinstance(event, ev.MessageEndEvent):
            message = event.message
            if message.get("role") == "user" and not self.titled:
                self.titled = True
                title = title_of(message_text(message.get("content"), " "))
                if title:
                    return [SessionInfoUpdate(session_update="session_info_update", title=title)]
            elif message.get("role") == "assistant":
                self.cost += _cost_of(message)
                used = usage_tokens(message)
                if used is not None:
                    return [self._update(used)]
            return []
        if isinstance(event, ev.CompactionEndEvent) and event.result is not None:
            return [self.usage()]
        return []
