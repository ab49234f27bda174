"""The user's own shell commands (pi's ``!command``), run beside the model's tools.

The output becomes a ``bashExecution`` message in the session. While the leaf is moving (a
run, a compaction, a navigation, a session change) it waits and joins the context at the
start of the next prompt instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from rpc_agent.agent.run_context import now_ms
from rpc_agent.agent.run_setup import additional_directories
from rpc_agent.protocol import events as ev
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.content import message_text
from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.store.manager import SessionManager
from rpc_agent.tools.base import ToolOutput

if TYPE_CHECKING:
    from rpc_agent.agent.core import AgentCore


class UserBash:
    """The command running now (to abort it) and the outputs still waiting for the session."""

    def __init__(self) -> None:
        self.scope: anyio.CancelScope | None = None
        self.pending: list[MessageDict] = []

    async def run(
        self,
        session: AgentCore,
        command: str,
        exclude_from_context: bool,
        update_id: str | int | float | None = None,
    ) -> m.BashResult:
        from rpc_agent.tools.base import ToolContext
        from rpc_agent.tools.bash import BashTool

        tool = BashTool()
        cancelled = False
        output_text = ""
        details: Mapping[str, Any] = {}

        def on_output(delta: str) -> None:
            session.emit(ev.BashExecutionUpdateEvent(id=update_id, delta=delta))

        def on_update(partial: ToolOutput) -> None:
            # An aborted command keeps what it printed so far (the tool raises, no result).
            nonlocal output_text
            output_text = message_text(partial.content)

        await session.checkpoints.barrier()
        with anyio.CancelScope() as scope:
            self.scope = scope
            try:
                result = await tool.execute(
                    tool.Args.model_validate({"command": command}),
                    ToolContext(
                        cwd=Path(session.manager.cwd),
                        tool_call_id=f"user_bash_{now_ms()}",
                        on_update=on_update,
                        on_output=on_output,
                        env=session.settings.shell_environment.environ(),
                        temp_files=session.temp_files,
                        reaper=session.reaper,
                        sandbox=session.sandbox.for_tools(
                            Path(session.manager.cwd), additional_directories(session)
                        ),
                    ),
                )
                output_text = message_text(result.content)
                details = result.details if isinstance(result.details, dict) else {}
            finally:
                self.scope = None
        if scope.cancelled_caught:
            cancelled = True
        message: MessageDict = {
            "role": "bashExecution",
            "command": command,
            "output": output_text,
            "exitCode": details.get("exitCode"),
            "cancelled": cancelled,
            "truncated": bool(details.get("truncated")),
            "timestamp": now_ms(),
        }
        if details.get("fullOutputPath"):
            message["fullOutputPath"] = details["fullOutputPath"]
        if exclude_from_context:
            message["excludeFromContext"] = True
        if session.is_streaming or session.is_compacting or session.operation is not None:
            self.pending.append(message)
        else:
            async with session.mutation():
                entry_id = await session.manager.append_message(message)
            await session.checkpoints.take_now(entry_id)
        return m.BashResult(
            output=output_text,
            exitCode=message["exitCode"],
            cancelled=cancelled,
            truncated=message["truncated"],
            fullOutputPath=message.get("fullOutputPath"),
        )

    async def flush(self, manager: SessionManager) -> None:
        """Store the outputs that waited for the run that starts now."""
        while self.pending:
            await manager.append_message(self.pending.pop(0))

    def abort(self) -> bool:
        if self.scope is None:
            return False
        self.scope.cancel()
        return True
