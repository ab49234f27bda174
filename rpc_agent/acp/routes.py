"""Methods of the current ACP schema that the SDK's router does not route yet.

The SDK (0.12.1) knows ``session/delete`` and ``logout`` (its schema has the requests, the
responses and the capabilities) but its agent router never routes them, so a client's request
would be "Method not found". The router is built inside the SDK's connection, and reaching it is the one use of an
SDK private member here: checked when the connection is made, so that an SDK that moved it
fails at start-up, not on an editor's first delete.
"""

from __future__ import annotations

from typing import Any

from acp.agent.connection import AgentSideConnection
from acp.meta import AGENT_METHODS
from acp.router import MessageRouter
from acp.schema import DeleteSessionRequest, LogoutRequest


def add_missing_routes(conn: AgentSideConnection, agent: Any) -> None:
    """Route ``session/delete`` to ``agent.delete_session`` and ``logout`` to ``agent.logout``."""
    router = getattr(getattr(conn, "_conn", None), "_handler", None)
    if not isinstance(router, MessageRouter):
        raise RuntimeError(
            "the ACP SDK's connection has no router where it used to: session/delete cannot be served"
        )
    router.route_request(AGENT_METHODS["session_delete"], DeleteSessionRequest, agent, "delete_session")
    router.route_request(AGENT_METHODS["logout"], LogoutRequest, agent, "logout")
