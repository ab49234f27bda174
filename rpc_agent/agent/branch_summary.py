"""Which entries a branch summary covers, and producing it (navigate_tree with summarize).

The abandoned branch is the path from the old leaf back to the deepest entry it shares with
the target's path (the common ancestor), stopping early at a compaction: what lies before a
compaction was already summarized once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict

from rpc_agent.agent.summarize import BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT, summarize
from rpc_agent.agent.summary_calls import SummaryCalls
from rpc_agent.protocol.shapes import EntryDict, MessageDict
from rpc_agent.providers.base import ModelInfo, Provider
from rpc_agent.store.context import entry_to_message
from rpc_agent.store.manager import SessionManager

SUMMARY_BUDGET_CHARS = 400_000
"""About 100k tokens of transcript: newest entries are kept first when a branch is longer."""


class FileOperations(TypedDict):
    """The ``details`` a summary written here stores: the files the summarized part read and
    changed, so that the next compaction can carry them on."""

    readFiles: list[str]
    modifiedFiles: list[str]


@dataclass(slots=True)
class BranchPreparation:
    common_ancestor_id: str | None
    entries: list[EntryDict]
    """Oldest first."""


def prepare_branch_summary(
    manager: SessionManager, old_leaf: str | None, target: str | None
) -> BranchPreparation:
    if old_leaf is None:
        return BranchPreparation(None, [])
    target_path = {e["id"] for e in manager.get_branch(target)} if target is not None else set()
    collected: list[EntryDict] = []
    common: str | None = None
    for entry in reversed(manager.get_branch(old_leaf)):
        if entry["id"] in target_path:
            common = entry["id"]
            break
        if entry.get("type") == "compaction":
            break
        collected.append(entry)
    collected.reverse()
    return BranchPreparation(common, collected)


def _budgeted(messages: list[MessageDict]) -> list[MessageDict]:
    kept: list[MessageDict] = []
    used = 0
    for message in reversed(messages):
        size = len(str(message.get("content", ""))) + len(str(message.get("summary", "")))
        if kept and used + size > SUMMARY_BUDGET_CHARS:
            break
        kept.append(message)
        used += size
    kept.reverse()
    return kept


def _listed(details: object, key: str) -> list[str]:
    files = details.get(key) if isinstance(details, dict) else None
    return [f for f in files if isinstance(f, str)] if isinstance(files, list) else []


def pi_details(entry: EntryDict) -> object:
    """The ``details`` of a summary entry when pi (or this agent) wrote them: a hook's are its
    own shape, and pi does not read files from them."""
    return None if entry.get("fromHook") else entry.get("details")


def file_operations(entries: list[EntryDict], carried: Iterable[object] = ()) -> FileOperations:
    """Files read and modified on the branch, from the tool calls the model made, and those
    ``carried`` from earlier summaries' details (their ``readFiles`` and ``modifiedFiles``)."""
    read: set[str] = set()
    modified: set[str] = set()
    for details in carried:
        read.update(_listed(details, "readFiles"))
        modified.update(_listed(details, "modifiedFiles"))
    for entry in entries:
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        for block in message.get("content") or []:
            if not isinstance(block, dict) or block.get("type") != "toolCall":
                continue
            path = (block.get("arguments") or {}).get("path")
            if not isinstance(path, str) or not path:
                continue
            if block.get("name") == "read":
                read.add(path)
            elif block.get("name") in ("write", "edit"):
                modified.add(path)
    return {"readFiles": sorted(read - modified), "modifiedFiles": sorted(modified)}


async def generate_branch_summary(
    provider: Provider,
    model: ModelInfo,
    entries: list[EntryDict],
    *,
    custom_instructions: str | None,
    replace_instructions: bool,
    calls: SummaryCalls | None = None,
) -> tuple[str, FileOperations]:
    """The summary text (with the preamble the model sees) and its details."""
    messages = [m for m in (entry_to_message(e) for e in entries) if m is not None]
    instructions = BRANCH_SUMMARY_PROMPT
    if custom_instructions:
        instructions = (
            custom_instructions
            if replace_instructions
            else f"{instructions}\n\nAdditional focus: {custom_instructions}"
        )
    text = await summarize(provider, model, _budgeted(messages), instructions, calls=calls)
    # As pi: the files of summaries made on the branch before are carried on.
    nested = [pi_details(e) for e in entries if e.get("type") == "branch_summary"]
    return BRANCH_SUMMARY_PREAMBLE + text, file_operations(entries, nested)
