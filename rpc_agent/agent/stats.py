"""``get_session_stats`` as pi 1.5.2 counts: every entry of the file, and the context's size.

Tokens and cost are what was billed across the whole session, compacted history and other
branches included: assistant messages, and since pi 1.5 also ``usage`` entries (cache
warming...), tool results that carry their own usage, and the summaries of compactions and
branch summaries. ``contextUsage`` is how full the model's window is on the current branch:
the last answer's reported usage plus an estimate of what follows it, unless a later context
edit or compaction made that report stale (then all of it is estimated), and unknown after a
compaction until an answer has come back.
"""

from __future__ import annotations

from rpc_agent.agent.compaction import TOKEN_KEYS, estimate_tokens
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.shapes import EntryDict, MessageDict, UsageDict
from rpc_agent.store.manager import SessionManager
from rpc_agent.store.projection import current_system_message


class _Totals:
    __slots__ = ("cost", "tokens")

    def __init__(self) -> None:
        self.tokens = dict.fromkeys(TOKEN_KEYS, 0)
        self.cost = 0.0

    def add(self, usage: UsageDict | None) -> None:
        """Add what ``usage`` counts; as read from a file, a value of another type counts 0."""
        if not isinstance(usage, dict):
            return
        for key in TOKEN_KEYS:
            value = usage.get(key)
            if isinstance(value, int | float):
                self.tokens[key] += int(value)
        cost = usage.get("cost")
        total = cost.get("total") if isinstance(cost, dict) else None
        if isinstance(total, int | float):
            self.cost += float(total)


def session_stats(manager: SessionManager, context_window: int) -> m.SessionStats:
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    tool_calls = total = 0
    totals = _Totals()
    for entry in manager.entries:
        kind = entry.get("type")
        if kind == "usage" or (kind in ("compaction", "branch_summary") and entry.get("usage")):
            totals.add(entry.get("usage"))
        if kind != "message":
            continue
        total += 1
        message = entry.get("message")
        if not message:
            continue
        role = message.get("role")
        if role in counts:
            counts[role] += 1
        if role == "toolResult" and message.get("usage"):
            totals.add(message["usage"])
        elif role == "assistant":
            content = message.get("content")
            tool_calls += (
                sum(1 for b in content if isinstance(b, dict) and b.get("type") == "toolCall")
                if isinstance(content, list)
                else 0
            )
            totals.add(message.get("usage"))
    tokens = totals.tokens
    return m.SessionStats(
        sessionFile=str(manager.session_file) if manager.session_file else None,
        sessionId=manager.session_id,
        userMessages=counts["user"],
        assistantMessages=counts["assistant"],
        toolCalls=tool_calls,
        toolResults=counts["toolResult"],
        totalMessages=total,
        tokens=m.TokenTotals(total=sum(tokens.values()), **tokens),
        cost=round(totals.cost, 6),
        contextUsage=context_usage(manager, context_window),
    )


def _usage_tokens(message: MessageDict) -> int:
    """The context size an answer reports (pi's ``calculateContextTokens``), 0 when it reports
    none or cannot be trusted (an error or an abort)."""
    if message.get("role") != "assistant" or message.get("stopReason") in ("aborted", "error"):
        return 0
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return 0
    total = usage.get("totalTokens")
    if isinstance(total, int | float) and total:
        return int(total)
    return sum(int(usage.get(key) or 0) for key in TOKEN_KEYS if isinstance(usage.get(key), int | float))


def context_usage(manager: SessionManager, context_window: int) -> m.ContextUsage | None:
    if context_window <= 0:
        return None
    branch = manager.get_branch()
    compaction_at = next(
        (i for i in range(len(branch) - 1, -1, -1) if branch[i].get("type") == "compaction"), -1
    )
    if compaction_at >= 0 and not _answered_since(branch, compaction_at):
        return m.ContextUsage(tokens=None, contextWindow=context_window, percent=None)
    messages = manager.build_session_context().messages
    tokens = _estimate(messages, _usage_is_current(branch))
    return m.ContextUsage(tokens=tokens, contextWindow=context_window, percent=tokens / context_window * 100)


def _answered_since(branch: list[EntryDict], compaction_at: int) -> bool:
    """Whether an answer with usage came back after the compaction and is still in the context
    (not omitted by a context edit)."""
    omitted: dict[str, bool] = {}
    for entry in branch[compaction_at + 1 :]:
        if entry.get("type") == "context_edit" and isinstance(entry.get("targetId"), str):
            omitted[entry["targetId"]] = not isinstance(entry.get("replacement"), dict)
    return any(
        entry.get("type") == "message"
        and isinstance(entry.get("message"), dict)
        and _usage_tokens(entry["message"]) > 0
        and not omitted.get(entry.get("id", ""), False)
        for entry in branch[compaction_at + 1 :]
    )


def _usage_is_current(branch: list[EntryDict]) -> bool:
    """Whether the last answer's usage was reported after the latest context edit or compaction
    (an edit or compaction changes the context that usage measured)."""
    for entry in reversed(branch):
        kind = entry.get("type")
        if kind in ("context_edit", "compaction"):
            return False
        if (
            kind == "message"
            and isinstance(entry.get("message"), dict)
            and _usage_tokens(entry["message"]) > 0
        ):
            return True
    return False


def _estimate(messages: list[MessageDict], usage_is_current: bool) -> int:
    """pi's ``estimateProjectedContextTokens``: the last answer's usage and an estimate of the
    messages after it, or, when that usage is stale or missing, an estimate of everything (the
    system messages counted once, replayed)."""
    if usage_is_current:
        for index in range(len(messages) - 1, -1, -1):
            reported = _usage_tokens(messages[index])
            if reported > 0:
                return reported + sum(estimate_tokens(m) for m in messages[index + 1 :])
    system = current_system_message(messages, 0)
    tokens = estimate_tokens(system) if system is not None else 0
    return tokens + sum(estimate_tokens(m) for m in messages if m.get("role") != "system")
