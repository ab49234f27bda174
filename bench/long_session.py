"""A long scripted session with automatic compaction: does the context stay bounded?

Runs N prompts (default 2,000) through a real AgentSession and session file with the offline
faux provider on its small-window model (32k tokens), each answer a few hundred tokens, and
reports how many compactions ran, the largest context sent to the model (the provider's own
input-token estimate of each request), the final file size and the time taken.

    .venv/bin/python -m bench.long_session [--turns 2000] [--reply-chars 1600]
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel

from bench.options import parse_counts
from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.agent.settings import AgentSettings, CompactionSettings
from rpc_agent.providers.base import AssistantEvent, ProviderRequest
from rpc_agent.providers.faux import FauxProvider, estimate_input_tokens
from rpc_agent.store import SessionManager


@dataclass
class LongRunResult:
    turns: int
    compactions: int
    max_context_tokens: int
    context_window: int
    file_bytes: int
    seconds: float
    final_context_messages: int


class MeasuringFaux(FauxProvider):
    """The faux provider, answering with long replies and remembering the largest request."""

    def __init__(self, reply_chars: int) -> None:
        super().__init__()
        self.reply_chars = reply_chars
        self.max_context = 0

    async def stream(self, request: ProviderRequest) -> Any:
        self.max_context = max(self.max_context, estimate_input_tokens(request))
        self.requests.clear()  # keep memory flat over thousands of calls
        if request.purpose != "summary":
            words = ("lorem ipsum dolor sit amet " * (self.reply_chars // 27 + 1))[: self.reply_chars]
            self.script.append({"text": words})
        events: list[AssistantEvent] = []
        async for event in super().stream(request):
            events.append(event)
            yield event


async def run_long_session(turns: int, reply_chars: int, folder: Path) -> LongRunResult:
    manager = SessionManager.create(str(folder), folder / "sessions")
    provider = MeasuringFaux(reply_chars)
    compactions = 0

    def emit(event: BaseModel) -> None:
        nonlocal compactions
        if getattr(event, "type", None) == "compaction_end" and getattr(event, "result", None) is not None:
            compactions += 1

    settings = AgentSettings(
        compaction=CompactionSettings(enabled=True, reserve_tokens=4096, keep_recent_tokens=8000)
    )
    agent = AgentSession(
        manager=manager, provider=provider, emit=emit, settings=settings, model_id="faux-mini"
    )
    started = time.perf_counter()
    for turn in range(turns):
        await agent.prompt(f"Step {turn}: continue the refactoring of module_{turn % 50}.py")
    seconds = time.perf_counter() - started
    final_messages = len(agent.messages())
    session_file = manager.session_file
    await agent.shutdown()
    return LongRunResult(
        turns=turns,
        compactions=compactions,
        max_context_tokens=provider.max_context,
        context_window=agent.model.contextWindow,
        file_bytes=session_file.stat().st_size if session_file else 0,
        seconds=seconds,
        final_context_messages=final_messages,
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_counts(__doc__, argv, turns=2000, reply_chars=1600)
    with tempfile.TemporaryDirectory() as scratch:
        result = anyio.run(run_long_session, args.turns, args.reply_chars, Path(scratch))
    print(f"turns                 {result.turns}")
    print(f"compactions           {result.compactions}")
    print(f"largest context sent  {result.max_context_tokens} tokens (window {result.context_window})")
    print(f"final context         {result.final_context_messages} messages")
    print(f"session file          {result.file_bytes / 1e6:.1f} MB")
    print(
        f"wall time             {result.seconds:.1f} s ({result.seconds / result.turns * 1000:.1f} ms/turn)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
