"""One ACP session: its AgentSession, its approval state and the queue of its updates.

Events from a session go through a per-session queue drained by one task (``pump``): updates
reach the client in order, and a prompt (or a permission request) waits until everything
before it has been sent (``flush``). The queue of a session the client does not know yet
(``session/new``, ``fork``, ``resume``) opens only once the transport has written the answer
that names it (``answered``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
from acp.interfaces import Client
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from rpc_agent.acp.status import SessionStatus
from rpc_agent.acp.updates import EventTranslator, Update
from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.agent.policy import ApprovalPolicy
from rpc_agent.methods.handlers import Methods

logger = logging.getLogger("rpc_agent.acp")


@dataclass
class Flush:
    """Put in a session's update queue; set once everything before it was sent."""

    done: anyio.Event = field(default_factory=anyio.Event)


@dataclass
class AcpSession:
    id: str
    agent: AgentSession
    send: MemoryObjectSendStream[Update | Flush]
    translator: EventTranslator
    answered: anyio.Event = field(default_factory=anyio.Event)
    """Set once the client has the answer that told it about this session."""
    status: SessionStatus = field(init=False)
    """Its context use, cost and title, as the editor was last told."""
    methods: Methods = field(init=False)
    """The JSON-RPC method table bound to this session's agent (for the extension methods)."""
    policy: ApprovalPolicy = field(default_factory=lambda: ApprovalPolicy(mode="writes"))
    """When the client is asked before a tool runs (the ``approval_policy`` config option)."""
    cancelled: bool = False
    closed: bool = False
    _stoppers: set[Callable[[], None]] = field(default_factory=set)
    """What else stops when the prompt is cancelled (a question to the editor waiting)."""

    def __post_init__(self) -> None:
        self.status = SessionStatus(self.agent)
        self.methods = Methods(self.agent, providers=[self.agent.provider.name], on_shutdown=lambda: None)

    def push(self, update: Update) -> None:
        if not self.closed:
            self.send.send_nowait(update)

    async def flush(self) -> None:
        """Wait until every update queued so far has been sent to the client."""
        if self.closed:
            return
        marker = Flush()
        self.send.send_nowait(marker)
        await marker.done.wait()

    async def pump(
        self, receive: MemoryObjectReceiveStream[Update | Flush], client: Callable[[], Client]
    ) -> None:
        """Send the queued updates in order, from the moment the client knows the session."""
        await self.answered.wait()
        async with receive:
            async for item in receive:
                if isinstance(item, Flush):
                    item.done.set()
                    continue
                try:
                    await client().session_update(session_id=self.id, update=item)
                except Exception as exc:  # a gone client must not stop the agent
                    logger.warning("session/update failed: %s", exc)

    def start_prompt(self) -> None:
        """A prompt begins: only a cancel from now on ends it as cancelled."""
        self.cancelled = False

    def cancel(self) -> None:
        """Stop the run; the prompt it answers ends as cancelled."""
        self.cancelled = True
        self.agent.abort()
        for stop in list(self._stoppers):
            stop()

    def on_cancel(self, stop: Callable[[], None]) -> Callable[[], None]:
        """Call ``stop`` if the session is cancelled meanwhile; returns what forgets it."""
        self._stoppers.add(stop)
        return lambda: self._stoppers.discard(stop)

    def move_to(self, cwd: str) -> None:
        """Run the tools in ``cwd`` from now on (the file's own header stays as written)."""
        self.agent.manager.cwd = cwd
        self.translator.cwd = cwd
