"""An MCP server's ``elicitation/create``, forwarded to the editor as ACP elicitation.

ACP's elicitation page sets the rules kept here: a mode is used only when the client advertised
it (``clientCapabilities.elicitation.form`` / ``.url``); form mode never carries secrets
(passwords, keys, tokens), and with no URL to send the user to, a form that asks for one is
declined rather than shown; a URL-mode request goes out as URL mode, scoped to the session and
the tool call during which the server asked. The request waits until the editor has every
update queued before it (it sees the tool call first), and a cancelled prompt withdraws the
question: the server is told ``cancel``. Anything else (no capability, a schema ACP cannot
carry, a failed request) is declined.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
from acp.interfaces import Client
from acp.schema import (
    ClientCapabilities,
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationUrlSessionMode,
)
from pydantic import ValidationError

from acp import RequestError
from rpc_agent.acp.session_state import AcpSession
from rpc_agent.mcp.elicitation import (
    DECLINE,
    Elicit,
    ElicitationAnswer,
    ElicitationDone,
    asks_for_secret,
    decline,
    nobody_to_tell,
)
from rpc_agent.protocol.host import ElicitationRequestParams


def editor_id(server: str, elicitation_id: str | None) -> str:
    """The id the editor knows a URL-mode elicitation by: unique on the connection, since two
    servers may use the same ids."""
    return f"{server}/{elicitation_id}"


def editor_completion(client: Callable[[], Client], caps: ClientCapabilities) -> ElicitationDone:
    """Pass a server's ``notifications/elicitation/complete`` on as ACP ``elicitation/complete``
    (to an editor that offers URL mode: only it can have been asked)."""
    if caps.elicitation is None or caps.elicitation.url is None:
        return nobody_to_tell

    async def done(server: str, elicitation_id: str) -> None:
        await client().complete_elicitation(elicitation_id=editor_id(server, elicitation_id))

    return done


def editor_elicitation(session: AcpSession, client: Callable[[], Client], caps: ClientCapabilities) -> Elicit:
    """The session's ``Elicit``: ask the editor, in the modes it advertised."""
    offered = caps.elicitation
    form = offered is not None and offered.form is not None
    url = offered is not None and offered.url is not None
    if not (form or url):
        return decline

    async def ask(request: ElicitationRequestParams) -> ElicitationAnswer:
        mode: ElicitationFormSessionMode | ElicitationUrlSessionMode
        if request.mode == "form":
            if not form or asks_for_secret(request.requestedSchema):
                return DECLINE
            try:
                schema = ElicitationSchema.model_validate(request.requestedSchema or {})
            except ValidationError:
                return DECLINE
            mode = ElicitationFormSessionMode(
                session_id=session.id, tool_call_id=request.toolCallId, requested_schema=schema
            )
        else:
            if not url or not request.url:
                return DECLINE
            try:
                mode = ElicitationUrlSessionMode(
                    session_id=session.id,
                    tool_call_id=request.toolCallId,
                    elicitation_id=editor_id(request.server, request.elicitationId),
                    url=request.url,  # pydantic checks it is a URL
                )
            except ValidationError:
                return DECLINE
        with anyio.CancelScope() as scope:
            forget = session.on_cancel(scope.cancel)
            try:
                await session.flush()
                response = await client().create_elicitation(
                    message=request.message, mode=mode, **{"rpc-agent": {"mcpServer": request.server}}
                )
            except (RequestError, ConnectionError, ValidationError):
                return DECLINE
            finally:
                forget()
        if scope.cancelled_caught:
            return ElicitationAnswer("cancel")
        if response.action == "accept":
            content = getattr(response, "content", None)
            return ElicitationAnswer("accept", dict(content) if isinstance(content, dict) else None)
        return ElicitationAnswer("decline" if response.action == "decline" else "cancel")

    return ask
