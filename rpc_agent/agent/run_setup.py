"""What a run starts with: its tools and their specs, the system prompt, the check every tool
call passes, and the limits; gathered from the AgentSession into one RunContext."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rpc_agent.agent.run_context import Authorize, RunContext
from rpc_agent.agent.structured import TOOL_NAME, StructuredRun
from rpc_agent.agent.system_prompt import build_system_prompt
from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.json_schema import JsonSchema
from rpc_agent.providers.base import ProviderRequest, ToolSpec
from rpc_agent.store import guard
from rpc_agent.tools.base import Tool, tool_schema

if TYPE_CHECKING:
    from rpc_agent.agent.core import AgentCore


def tool_specs(tools: list[Tool]) -> list[ToolSpec]:
    return [ToolSpec(name=t.name, description=t.description, parameters=tool_schema(t)) for t in tools]


def authorizer(session: AgentCore) -> Authorize | None:
    """The ACP front's permission callback, else the approval policy with the host."""
    if session.authorize is not None:
        return session.authorize
    gate = session.gate

    async def authorize(call_id: str, name: str, arguments: JsonDict) -> bool:
        tool = next((t for t in [*session.tools, *session.client_tools] if t.name == name), None)
        if tool is not None:
            await gate.check(tool, call_id, arguments)
        return True

    return authorize


def additional_directories(session: AgentCore) -> tuple[Path, ...]:
    """The session's additional directories (writable under workspace-write): its settings'
    ``additional_directories`` (see ``agent.workspace``)."""
    return tuple(Path(folder) for folder in session.settings.additional_directories)


def run_context(
    session: AgentCore,
    *,
    max_turns: int | None,
    max_budget_usd: float | None,
    output_schema: JsonSchema | None = None,
) -> RunContext:
    """The context of one run; limits given for this prompt win over the session's. With an
    output schema the run also offers the final-answer tool (``agent.structured``)."""
    structured = StructuredRun(output_schema) if output_schema is not None else None
    tools = session.run_tools()
    if structured is not None:
        tools = [*(t for t in tools if t.name != TOOL_NAME), structured.tool()]
    specs = tool_specs(tools)
    cwd = Path(session.manager.cwd)
    sandbox = session.sandbox.for_tools(cwd, additional_directories(session))
    system_prompt = session.system_prompt_override or build_system_prompt(
        cwd, specs, additional_directories=session.settings.additional_directories
    )
    if session.append_system_prompt:
        system_prompt = f"{system_prompt}\n\n{session.append_system_prompt}"
    request = ProviderRequest(
        model=session.model,
        system_prompt=system_prompt,
        messages=[],
        tools=specs,
        thinking_level=session.thinking_level,
    )
    return RunContext(
        manager=session.manager,
        provider=session.provider,
        request=request,
        tools=tools,
        settings=session.settings,
        queue=session.queue,
        emit=session.emit,
        cwd=cwd,
        on_queue_change=session.announce_queue,
        authorize=authorizer(session),
        files=session.files,
        # A sandboxed bash runs here, in bubblewrap, not in an editor's terminal we cannot fence.
        commands=session.commands if sandbox is None else None,
        session_folders=guard.store_folders(session.home, (session.session_dir,)),
        sandbox=sandbox,
        temp_files=session.temp_files,
        reaper=session.reaper,
        host=session.host,
        max_turns=max_turns if max_turns is not None else session.max_turns,
        max_budget_usd=max_budget_usd if max_budget_usd is not None else session.max_budget_usd,
        structured=structured,
        checkpoints=session.checkpoints,
    )
