"""``bash`` in the editor's terminal (ACP ``terminal/*``), when the client offers one.

The user watches the command run in the editor, where the tool call shows the terminal. The
behaviour the model relies on stays that of the local ``bash``: ``bash -c`` in the session's
cwd, the same timeout (the command is killed, its output up to then is returned), the same
tail of the output, and an abort kills the command. The terminal is always released, and a
gone client cannot hold the run: every clean-up request has a bound.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Awaitable, Callable

import anyio
from acp.interfaces import Client

from acp import RequestError
from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput
from rpc_agent.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_tail

OUTPUT_BYTE_LIMIT = 4 * DEFAULT_MAX_BYTES
"""What the client keeps of the output (its start is dropped first); we show a tail of it."""
CLEANUP_WAIT = 2.0
"""Seconds a kill or release may take before we stop waiting for the client."""


class EditorTerminal:
    def __init__(
        self, client: Callable[[], Client], session_id: str, on_terminal: Callable[[str, str], None]
    ) -> None:
        self._client = client
        self._session_id = session_id
        self._on_terminal = on_terminal
        """``(tool_call_id, terminal_id)``: show the terminal in the tool call."""

    async def run(self, command: str, time_limit: float | None, ctx: ToolContext) -> ToolOutput:
        client = self._client()
        try:
            created = await client.create_terminal(
                session_id=self._session_id,
                command=shutil.which("bash") or "bash",
                args=["-c", command],
                cwd=str(ctx.cwd),
                output_byte_limit=OUTPUT_BYTE_LIMIT,
            )
        except (RequestError, ConnectionError) as exc:
            raise ToolError(f"The editor could not start the command: {exc}") from None
        terminal_id = created.terminal_id
        self._on_terminal(ctx.tool_call_id, terminal_id)
        exited = False
        deadline = anyio.move_on_after(time_limit)
        try:
            with deadline:
                status = await client.wait_for_terminal_exit(
                    session_id=self._session_id, terminal_id=terminal_id
                )
                exited = True
            if not exited:
                await client.kill_terminal(session_id=self._session_id, terminal_id=terminal_id)
            output = await client.terminal_output(session_id=self._session_id, terminal_id=terminal_id)
        except (RequestError, ConnectionError) as exc:
            raise ToolError(f"The editor's terminal failed: {exc}") from None
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_WAIT):
                if not exited and not deadline.cancelled_caught:  # aborted: stop the command
                    await _quietly(client.kill_terminal(session_id=self._session_id, terminal_id=terminal_id))
                await _quietly(client.release_terminal(session_id=self._session_id, terminal_id=terminal_id))
        code = status.exit_code if exited else None
        signal = status.signal if exited else None
        return _result(
            output.output, output.truncated, code, signal, time_limit if not exited else None, terminal_id
        )


async def _quietly(request: Awaitable[object]) -> None:
    with contextlib.suppress(RequestError, ConnectionError):
        await request


def _result(
    text: str,
    client_truncated: bool,
    code: int | None,
    signal: str | None,
    timed_out_after: float | None,
    terminal_id: str,
) -> ToolOutput:
    tail = truncate_tail(text)
    shown = tail.content.removesuffix("\n") or "(no output)"
    notes: list[str] = []
    if tail.truncated or client_truncated:
        notes.append(f"[Output truncated: showing the last {format_size(tail.output_bytes)}.]")
    is_error = False
    if timed_out_after is not None:
        is_error = True
        notes.append(f"Command timed out after {timed_out_after:g} seconds; it was killed.")
    elif signal:
        is_error = True
        notes.append(f"Command was killed by signal {signal}.")
    elif code:
        is_error = True
        notes.append(f"Command exited with code {code}.")
    if notes:
        shown += "\n\n" + "\n".join(notes)
    details = {
        "exitCode": code,
        "truncated": tail.truncated or client_truncated,
        "timedOut": timed_out_after is not None,
        "terminalId": terminal_id,
    }
    return ToolOutput.text(shown, details=details, is_error=is_error)
