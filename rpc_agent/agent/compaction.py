"""Compaction: replace the old part of a branch's context by a structured summary.

Pure preparation (which entries are summarized, where the kept part starts) is separated from
the model call, so the cut-point rules can be tested on plain entry lists. The rules:

* the summarized span starts at the previous compaction's kept boundary on this branch (each
  branch has its own compaction history, because only the path to the leaf is looked at);
* walking back from the newest entry, entries are kept until ``keep_recent_tokens`` is
  reached; the cut lands on a valid cut point (user, assistant, bashExecution and custom
  messages, custom_message and branch_summary entries), never on a tool result, which stays
  with its call;
* when the cut lands inside a turn (one turn bigger than the budget), the turn's beginning is
  summarized separately and merged under a "Turn Context" heading (a split turn).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import orjson

from rpc_agent.agent.branch_summary import FileOperations, file_operations, pi_details
from rpc_agent.agent.summarize import SUMMARY_FORMAT, summarize
from rpc_agent.agent.summary_calls import SummaryCalls
from rpc_agent.errors import NothingToCompactError
from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.shapes import EntryDict, MessageDict
from rpc_agent.providers.base import ModelInfo, Provider
from rpc_agent.store.context import entry_to_message

IMAGE_CHARS = 4800
TokenKey = Literal["input", "output", "cacheRead", "cacheWrite"]
TOKEN_KEYS: tuple[TokenKey, ...] = ("input", "output", "cacheRead", "cacheWrite")
"""The counts of a usage that add up to its total when ``totalTokens`` is missing."""

COMPACTION_PROMPT = (
    "The conversation above is being compacted: it will be replaced by your summary, and the "
    "assistant will continue from the summary alone. Keep every detail needed to continue the "
    "work.\n\n" + SUMMARY_FORMAT
)
UPDATE_PROMPT = (
    "A previous summary of the conversation before this part is given in <previous-summary>. "
    "Write one updated summary covering both, keeping what is still relevant.\n\n" + SUMMARY_FORMAT
)
TURN_PREFIX_PROMPT = (
    "This is the beginning of a turn that is too long to keep whole; its end is kept verbatim. "
    "Summarize what the user asked and what was done so far in this turn, briefly.\n\n" + SUMMARY_FORMAT
)


def estimate_tokens(message: MessageDict) -> int:
    """chars/4, counting text, thinking, tool names and arguments; an image counts 4,800 chars."""
    chars = 0
    for key in ("summary", "command", "output"):
        value = message.get(key)
        if isinstance(value, str):
            chars += len(value)
    content = message.get("content")
    if isinstance(content, str):
        chars += len(content)
    elif isinstance(content, list):
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None  # as read: any JSON
            if kind == "text":
                chars += len(str(block.get("text", "")))
            elif kind == "thinking":
                chars += len(str(block.get("thinking", "")))
            elif kind == "toolCall":
                chars += len(str(block.get("name", ""))) + len(orjson.dumps(block.get("arguments") or {}))
            elif kind == "image":
                chars += IMAGE_CHARS
    if message.get("role") == "system":  # pi 1.5: its sections and tool declarations count too
        sections = message.get("sections")
        if isinstance(sections, dict):
            chars += sum(len(text) for text in sections.values() if isinstance(text, str))
        if message.get("toolsAdded"):
            chars += len(orjson.dumps(message["toolsAdded"]))
    return math.ceil(chars / 4)


def usage_tokens(message: MessageDict) -> int | None:
    """Context size reported by a successful assistant message, if it carries usage."""
    if message.get("role") != "assistant" or message.get("stopReason") in ("error", "aborted"):
        return None
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    total = int(usage.get("totalTokens") or 0) or sum(int(usage.get(key) or 0) for key in TOKEN_KEYS)
    return total or None


def context_tokens(messages: list[MessageDict]) -> int:
    """The last real usage plus estimates of everything after it (estimates alone without one)."""
    for index in range(len(messages) - 1, -1, -1):
        reported = usage_tokens(messages[index])
        if reported is not None:
            return reported + sum(estimate_tokens(m) for m in messages[index + 1 :])
    return sum(estimate_tokens(m) for m in messages)


def _role(entry: EntryDict) -> str | None:
    if entry.get("type") == "message" and isinstance(entry.get("message"), dict):
        return str(entry["message"].get("role"))
    return None


def is_valid_cut_point(entry: EntryDict) -> bool:
    kind = entry.get("type")
    if kind in ("custom_message", "branch_summary"):
        return True
    return _role(entry) in ("user", "assistant", "bashExecution", "custom")


def is_turn_start(entry: EntryDict) -> bool:
    return entry.get("type") in ("custom_message", "branch_summary") or _role(entry) in (
        "user",
        "bashExecution",
        "custom",
    )


@dataclass(slots=True)
class CompactionPreparation:
    first_kept_entry_id: str
    messages_to_summarize: list[MessageDict]
    turn_prefix_messages: list[MessageDict]
    previous_summary: str | None
    tokens_before: int
    entries_summarized: list[EntryDict] = field(default_factory=list)
    previous_details: JsonDict | None = None
    """The previous compaction's ``details`` (``FileOperations``); None after a compaction a hook
    supplied, whose details are its own (pi carries no files from them either)."""

    @property
    def is_split_turn(self) -> bool:
        return bool(self.turn_prefix_messages)


def prepare_compaction(
    path: list[EntryDict], keep_recent_tokens: int, tokens_before: int
) -> CompactionPreparation:
    """Decide what a compaction of the branch ``path`` (root first) summarizes and keeps."""
    previous_index = next(
        (i for i in range(len(path) - 1, -1, -1) if path[i].get("type") == "compaction"), -1
    )
    previous = path[previous_index] if previous_index >= 0 else None
    start = 0
    if previous is not None:
        kept = previous.get("firstKeptEntryId")
        start = next(
            (i for i in range(previous_index) if path[i].get("id") == kept),
            previous_index + 1,
        )
    span = [e for e in path[start:] if e.get("type") != "compaction"]
    if not span:
        raise NothingToCompactError("nothing to compact")

    cut = 0
    accumulated = 0
    for index in range(len(span) - 1, -1, -1):
        message = entry_to_message(span[index])
        if message is None:
            continue
        accumulated += estimate_tokens(message)
        if accumulated >= keep_recent_tokens:
            cut = next((j for j in range(index, len(span)) if is_valid_cut_point(span[j])), len(span))
            break
    if cut <= 0 or cut >= len(span):
        raise NothingToCompactError("nothing to compact: the branch fits in the kept part")

    turn_start = cut
    if not is_turn_start(span[cut]):
        turn_start = next((j for j in range(cut - 1, -1, -1) if is_turn_start(span[j])), 0)
    summarized_entries = span[:turn_start]
    prefix_entries = span[turn_start:cut] if turn_start < cut else []
    if not summarized_entries and not prefix_entries:
        raise NothingToCompactError("nothing to compact")
    details = pi_details(previous) if previous is not None else None
    return CompactionPreparation(
        first_kept_entry_id=str(span[cut]["id"]),
        messages_to_summarize=[m for m in map(entry_to_message, summarized_entries) if m is not None],
        turn_prefix_messages=[m for m in map(entry_to_message, prefix_entries) if m is not None],
        previous_summary=str(previous.get("summary")) if previous is not None else None,
        tokens_before=tokens_before,
        entries_summarized=summarized_entries + prefix_entries,
        previous_details=details if isinstance(details, dict) else None,
    )


def cumulative_file_operations(preparation: CompactionPreparation) -> FileOperations:
    return file_operations(preparation.entries_summarized, [preparation.previous_details])


def _file_tags(details: FileOperations) -> str:
    parts = []
    if details["readFiles"]:
        parts.append("<read-files>\n" + "\n".join(details["readFiles"]) + "\n</read-files>")
    if details["modifiedFiles"]:
        parts.append("<modified-files>\n" + "\n".join(details["modifiedFiles"]) + "\n</modified-files>")
    return ("\n\n" + "\n\n".join(parts)) if parts else ""


async def generate_compaction_summary(
    provider: Provider,
    model: ModelInfo,
    preparation: CompactionPreparation,
    custom_instructions: str | None,
    calls: SummaryCalls | None = None,
) -> tuple[str, FileOperations]:
    """The summary text and details (cumulative read/modified files)."""
    focus = f"\n\nAdditional focus: {custom_instructions}" if custom_instructions else ""
    history = preparation.previous_summary or ""
    if preparation.messages_to_summarize:
        prompt = (UPDATE_PROMPT if preparation.previous_summary else COMPACTION_PROMPT) + focus
        history = await summarize(
            provider,
            model,
            preparation.messages_to_summarize,
            prompt,
            previous_summary=preparation.previous_summary,
            calls=calls,
        )
    summary = history
    if preparation.turn_prefix_messages:
        prefix = await summarize(
            provider, model, preparation.turn_prefix_messages, TURN_PREFIX_PROMPT + focus, calls=calls
        )
        summary = f"{history}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix}" if history else prefix
    details = cumulative_file_operations(preparation)
    return summary + _file_tags(details), details
