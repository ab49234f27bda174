"""Summaries of conversation slices (branch summaries now, compaction later).

The slice is serialized as a plain transcript and sent as one user message with no tools, so
the summarizer cannot be confused into continuing the conversation or calling tools.
"""

from __future__ import annotations

import orjson

from rpc_agent.agent.summary_calls import SummaryCalls
from rpc_agent.errors import ProviderError
from rpc_agent.protocol.content import message_text
from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.providers.base import ModelInfo, Provider, ProviderRequest

TOOL_RESULT_LIMIT = 2000

SUMMARY_SYSTEM_PROMPT = (
    "You are a context summarization assistant. Read the conversation transcript and write a "
    "structured summary that another assistant can continue from. Do not continue the "
    "conversation and do not answer questions in it; only summarize."
)

SUMMARY_FORMAT = """Use this format:

## Goal
[What the user is trying to accomplish]

## Constraints & Preferences
- [Requirements the user stated]

## Progress
### Done
- [x] [Completed work]

### In Progress
- [ ] [Current work]

## Key Decisions
- **[Decision]**: [Rationale]

## Next Steps
1. [What should happen next]

## Critical Context
- [Data, paths, errors or references needed to continue]"""

BRANCH_SUMMARY_PROMPT = (
    "The user left the conversation branch below to continue from an earlier point. Summarize "
    "what was explored and learned on this branch so it is not lost.\n\n" + SUMMARY_FORMAT
)

BRANCH_SUMMARY_PREAMBLE = (
    "The user explored a different conversation branch before returning here.\n"
    "Summary of that exploration:\n\n"
)


def _nowhere(_event: object) -> None:
    """Where the events of a call without retries go: it has none to tell."""


def serialize_transcript(messages: list[MessageDict]) -> str:
    """``[User]: ...``, ``[Assistant]: ...``, ``[Tool result]: ...`` lines; tool output cut short."""
    lines: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            lines.append("[User]: " + message_text(message.get("content"), "\n"))
        elif role == "assistant":
            content = message.get("content") or []
            thinking = "\n".join(
                b.get("thinking", "") for b in content if isinstance(b, dict) and b.get("type") == "thinking"
            )
            if thinking:
                lines.append(f"[Assistant thinking]: {thinking}")
            text = message_text(content, "\n")
            if text:
                lines.append(f"[Assistant]: {text}")
            calls = [
                f"{b.get('name')}({orjson.dumps(b.get('arguments') or {}).decode()})"
                for b in content
                if isinstance(b, dict) and b.get("type") == "toolCall"
            ]
            if calls:
                lines.append(f"[Assistant tool calls]: {'; '.join(calls)}")
        elif role == "toolResult":
            text = message_text(message.get("content"), "\n")
            if len(text) > TOOL_RESULT_LIMIT:
                text = text[:TOOL_RESULT_LIMIT] + f"\n[... {len(text) - TOOL_RESULT_LIMIT} more characters]"
            lines.append(f"[Tool result]: {text}")
        elif role == "bashExecution":
            lines.append(
                f"[User ran]: {message.get('command')}\n{str(message.get('output', ''))[:TOOL_RESULT_LIMIT]}"
            )
        elif role == "custom":
            lines.append("[Context]: " + message_text(message.get("content"), "\n"))
        elif role in ("branchSummary", "compactionSummary"):
            lines.append(f"[Earlier summary]: {message.get('summary', '')}")
    return "\n\n".join(lines)


async def summarize(
    provider: Provider,
    model: ModelInfo,
    messages: list[MessageDict],
    instructions: str,
    *,
    previous_summary: str | None = None,
    calls: SummaryCalls | None = None,
) -> str:
    """Ask the provider for a summary; raises ProviderError when it fails or returns nothing.

    ``calls`` retries the call on transient errors and adds up its usage; without it, one
    call and no retry."""
    prompt = f"<conversation>\n{serialize_transcript(messages)}\n</conversation>\n\n"
    if previous_summary:
        prompt += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    prompt += instructions
    request = ProviderRequest(
        model=model,
        system_prompt=SUMMARY_SYSTEM_PROMPT,
        messages=[{"role": "user", "content": prompt, "timestamp": 0}],
        thinking_level="off",
        purpose="summary",
    )
    final = await (calls or SummaryCalls(None, _nowhere, "compaction")).complete(provider, request)
    text = message_text(final.get("content"), "\n").strip()
    if not text:
        raise ProviderError("summary failed: the model returned no text")
    return text
