"""``get_session_stats``'s result: what a session cost, and how full the model's window is."""

from pydantic import Field

from rpc_agent.protocol.base import Result


class TokenTotals(Result):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    total: int


class ContextUsage(Result):
    """How full the model's context window is on the current branch, as pi reports it."""

    tokens: int | None = Field(
        description="the last answer's reported size plus an estimate of what follows it (all of it "
        "estimated after a later context edit); null after a compaction until an answer came back"
    )
    contextWindow: int
    percent: float | None


class SessionStats(Result):
    """Totals over every entry of the file (other branches and compacted history included):
    assistant messages, usage entries, tool results and summaries that carry usage."""

    sessionFile: str | None
    sessionId: str
    userMessages: int
    assistantMessages: int
    toolCalls: int
    toolResults: int
    totalMessages: int
    tokens: TokenTotals
    cost: float
    contextUsage: ContextUsage | None = Field(
        default=None, description="absent when the model's window is unknown"
    )
