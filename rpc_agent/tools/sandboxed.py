"""The tools' side of the sandbox: their processes wrapped in it, a refusal explained, and,
when the host agrees, one command run outside it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rpc_agent.sandbox import Sandbox, bwrap, denials
from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput


def active(ctx: ToolContext) -> Sandbox | None:
    sandbox = ctx.sandbox
    return sandbox if sandbox is not None and sandbox.policy.active else None


def wrap(argv: Sequence[str], env: dict[str, str], ctx: ToolContext) -> tuple[list[str], dict[str, str]]:
    """``argv`` and ``env`` as they run under the context's sandbox (as they are without one)."""
    sandbox = active(ctx)
    if sandbox is None:
        return list(argv), env
    return bwrap.command(sandbox, argv, ctx.cwd), bwrap.environment(sandbox, env)


def refusal_note(output: ToolOutput, ctx: ToolContext) -> str | None:
    """The sandbox's note for a command's result, when the sandbox refused something in it."""
    sandbox = active(ctx)
    if sandbox is None:
        return None
    text = "\n".join(block.get("text", "") for block in output.content if block.get("type") == "text")
    return denials.explain(text, sandbox)


def with_note(output: ToolOutput, note: str) -> ToolOutput:
    content = list(output.content)
    for index in range(len(content) - 1, -1, -1):
        if content[index].get("type") == "text":
            content[index] = {**content[index], "text": f"{content[index]['text']}\n\n{note}"}
            break
    else:
        content.append({"type": "text", "text": note})
    details = dict(output.details) if isinstance(output.details, dict) else {}
    details["sandboxDenied"] = True
    return ToolOutput(content, details, output.is_error)


def check_write(path: Path, ctx: ToolContext) -> None:
    """A tool error for a file tool's write that the sandbox would refuse a command."""
    sandbox = active(ctx)
    if sandbox is not None and (reason := sandbox.write_refusal(path)) is not None:
        raise ToolError(f"Refusing to write {path}: {reason}.")


def check_read(path: Path, ctx: ToolContext) -> None:
    """A tool error for a file tool's read of a path the sandbox hides."""
    sandbox = active(ctx)
    if sandbox is not None and (reason := sandbox.read_refusal(path)) is not None:
        raise ToolError(f"Refusing to read {path}: {reason}.")
