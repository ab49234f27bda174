"""The id of the request a handler task is answering, for events that name their request.

Handlers take validated params only; the few that must echo their request's id in events
(the user's ``bash`` streams ``bash_execution_update`` with it, as pi does) read it here. The
router sets it in each handler's own task, so concurrent requests never see each other's.
"""

from __future__ import annotations

from contextvars import ContextVar

CURRENT_REQUEST_ID: ContextVar[object] = ContextVar("rpc_agent_request_id", default=None)
