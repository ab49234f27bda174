"""What the model sees: the path from the leaf to the root, turned into messages.

Pure functions over plain entry dicts, so they can be tested without files and reused by the
compaction and navigation code. Nothing here recurses: a 100,000-entry chain is walked in a
loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

import msgspec

from rpc_agent.protocol.shapes import EntryDict, MessageDict, ReplacementDict
from rpc_agent.store.projection import apply_edit, edit_of, is_system_message_entry, normalized


@dataclass(slots=True)
class ModelRef:
    provider: str
    modelId: str


M = TypeVar("M", MessageDict, MessageDict | msgspec.Raw)
"""What a context holds per message: the dict, or (for a JSON reader) also stored JSON."""


@dataclass(slots=True)
class ContextOf(Generic[M]):
    """What one walk of the path finds; the two kinds below differ only in what their messages
    are, so that a caller sees in the type whether it may meet unparsed JSON."""

    messages: list[M] = field(default_factory=list)
    thinkingLevel: str = "off"
    model: ModelRef | None = None
    thinkingLevelRecorded: bool = False
    """Whether the path holds a ``thinking_level_change`` (else ``thinkingLevel`` is the default)."""


class SessionContext(ContextOf[MessageDict]):
    """The model's context for a leaf: its messages, thinking level and model."""

    __slots__ = ()


class StoredContext(ContextOf[MessageDict | msgspec.Raw]):
    """The context as a reader that sends it on as JSON gets it: a message still held as its
    stored line is the raw JSON of that message (``msgspec.Raw``), never parsed."""

    __slots__ = ()


def iso_to_ms(timestamp: Any) -> int:
    """Entry timestamps are ISO strings, message timestamps are epoch milliseconds."""
    if isinstance(timestamp, str):
        try:
            return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)
        except ValueError:
            return 0
    if isinstance(timestamp, int | float):
        return int(timestamp)
    return 0


def path_to_root(by_id: Mapping[str, EntryDict], leaf_id: str | None) -> list[EntryDict]:
    """Entries from the root down to ``leaf_id``; a missing parent ends the walk.

    A cycle (a corrupt file where an entry is its own ancestor) also ends the walk instead of
    looping forever.
    """
    path: list[EntryDict] = []
    seen: set[str] = set()
    current = by_id.get(leaf_id) if leaf_id is not None else None
    while current is not None:
        cid = current.get("id")
        if cid in seen:
            break
        seen.add(cid)
        path.append(current)
        parent = current.get("parentId")
        current = by_id.get(parent) if isinstance(parent, str) else None
    path.reverse()
    return path


def parse_model_string(value: str) -> ModelRef:
    """The fork dialect stores ``"provider/model-id"`` in one field."""
    provider, sep, model_id = value.partition("/")
    if not sep:
        return ModelRef(provider="", modelId=value)
    return ModelRef(provider=provider, modelId=model_id)


def entry_to_message(entry: EntryDict) -> MessageDict | None:
    """The message an entry contributes to the context, or None for bookkeeping entries."""
    kind = entry.get("type")
    if kind == "message":
        stored = entry.get("message")
        return normalized(stored) if isinstance(stored, dict) else None
    if kind == "custom_message":
        content = entry.get("content")
        message: MessageDict = {
            "role": "custom",
            "customType": entry.get("customType", ""),
            "content": [] if content is None else content,  # as pi: ``content ?? []``
            "timestamp": iso_to_ms(entry.get("timestamp")),
        }
        if "display" in entry:  # as pi: a missing ``display`` stays missing (and means shown)
            message["display"] = entry["display"]
        if "details" in entry:  # as pi: a null ``details`` is kept, only a missing one is left out
            message["details"] = entry["details"]
        return message
    if kind == "branch_summary" and entry.get("summary"):
        return {
            "role": "branchSummary",
            "summary": entry["summary"],
            "fromId": entry.get("fromId", ""),
            "timestamp": iso_to_ms(entry.get("timestamp")),
        }
    return None


def build_session_context(
    entries: Sequence[EntryDict],
    leaf_id: str | None,
    by_id: Mapping[str, EntryDict] | None = None,
    *,
    leaf_is_explicit: bool = True,
    load: Callable[[EntryDict], EntryDict] | None = None,
) -> SessionContext:
    """Build the model's context for the branch ending at ``leaf_id``.

    ``leaf_id`` None with ``leaf_is_explicit`` means "before the first entry" (an empty
    context, as after navigating to the root user message); an unknown id, or None with
    ``leaf_is_explicit=False``, falls back to the last entry in file order.

    One walk from the leaf towards the root: the latest compaction, model and thinking level
    are the first ones met on the way, so each is settled as soon as it is seen.

    ``load`` completes a message entry that is still a stub (see ``files.parse_lines``); it is
    called only for the messages whose content is read: those that reach the context, and
    those passed while looking for the latest assistant message's model.
    """
    full = load or _same

    def take(entry: EntryDict) -> MessageDict | None:
        message = full(entry).get("message")
        return normalized(message) if isinstance(message, dict) else None

    context = SessionContext()
    _build(context, entries, leaf_id, by_id, leaf_is_explicit, full, take)
    return context


def build_stored_context(
    entries: Sequence[EntryDict],
    leaf_id: str | None,
    by_id: Mapping[str, EntryDict],
    *,
    load: Callable[[EntryDict], EntryDict],
    message_of: Callable[[EntryDict], MessageDict | msgspec.Raw | None],
) -> StoredContext:
    """``build_session_context`` for a reader that sends the context on as JSON: a message
    entry contributes what ``message_of`` gives (the stored JSON of a stub, else the message
    as pi's context sees it; None leaves the entry out)."""
    context = StoredContext()
    _build(context, entries, leaf_id, by_id, True, load, message_of)
    return context


def _build(
    context: ContextOf[M],
    entries: Sequence[EntryDict],
    leaf_id: str | None,
    by_id: Mapping[str, EntryDict] | None,
    leaf_is_explicit: bool,
    full: Callable[[EntryDict], EntryDict],
    take: Callable[[EntryDict], M | None],
) -> None:
    """Fill ``context`` (see ``build_session_context``)."""
    if by_id is None:
        by_id = {e["id"]: e for e in entries if isinstance(e.get("id"), str)}
    if leaf_id is None and leaf_is_explicit:
        return
    leaf = by_id.get(leaf_id) if leaf_id is not None else None
    if leaf is None:
        if not entries:
            return
        leaf = entries[-1]
    backwards = _walk_to_root(by_id, leaf)

    level: str | None = None
    model: ModelRef | None = None
    compaction_at = -1
    edits: list[int] = []
    for index, entry in enumerate(backwards):
        kind = entry.get("type")
        if kind == "message":
            if model is None:
                message = full(entry).get("message")
                if isinstance(message, dict) and message.get("role") == "assistant":
                    provider, model_id = message.get("provider"), message.get("model")
                    if isinstance(provider, str) and isinstance(model_id, str):
                        model = ModelRef(provider, model_id)
        elif kind == "thinking_level_change":
            if level is None and isinstance(entry.get("thinkingLevel"), str):
                level = entry["thinkingLevel"]
        elif kind == "model_change":
            if model is None:
                provider, model_id = entry.get("provider"), entry.get("modelId")
                named = entry.get("model")
                if isinstance(provider, str) and isinstance(model_id, str):
                    model = ModelRef(provider, model_id)
                elif isinstance(named, str) and entry.get("role", "default") == "default":
                    model = parse_model_string(named)
        elif kind == "compaction":
            if compaction_at < 0:
                compaction_at = index
        elif kind == "context_edit":
            edits.append(index)
    if level is not None:
        context.thinkingLevel = level
        context.thinkingLevelRecorded = True
    context.model = model

    # pi's buildContextEntries: without a compaction, the whole path; with one, the
    # compaction, then the kept entries from its firstKeptEntryId (none when that id is not
    # on the path, or is the compaction's own: retain-none), then everything after it.
    kept_at = -1
    if compaction_at >= 0:
        first_kept = backwards[compaction_at].get("firstKeptEntryId")
        for index in range(compaction_at + 1, len(backwards)):
            if backwards[index].get("id") == first_kept:
                kept_at = index
                break
    project: _Projection[M] = _Projection(take, full, _latest_edits(backwards, edits, compaction_at, kept_at))
    messages = context.messages
    if compaction_at < 0:
        project.extend(messages, backwards, len(backwards) - 1, -1)
        return
    project.compaction(messages, backwards[compaction_at])
    if kept_at >= 0:
        # The compaction's checkpoint stands for the system messages before it.
        project.extend(messages, backwards, kept_at, compaction_at, drop_system=True)
    project.extend(messages, backwards, compaction_at - 1, -1)


def _latest_edits(
    backwards: list[EntryDict], edits: list[int], compaction_at: int, kept_at: int
) -> dict[str, ReplacementDict | None]:
    """The replacement of each edited entry: the latest ``context_edit`` naming it among the
    entries that make up the context (an edit summarised away by a compaction no longer
    applies). ``edits`` are positions in ``backwards``, latest first."""
    latest: dict[str, ReplacementDict | None] = {}
    for index in edits:
        if compaction_at >= 0 and index > compaction_at and index > kept_at:
            continue
        found = edit_of(backwards[index])
        if found is not None and found[0] not in latest:
            latest[found[0]] = found[1]
    return latest


def _walk_to_root(by_id: Mapping[str, EntryDict], leaf: EntryDict) -> list[EntryDict]:
    """The path from ``leaf`` (as indexed under its id) to the root, leaf first.

    The same entries as ``path_to_root`` in the opposite order, for corrupt files too.
    """
    backwards: list[EntryDict] = []
    append, get = backwards.append, by_id.get
    leaf_key = leaf.get("id")
    current = get(leaf_key) if leaf_key is not None else None
    # A path visits every entry at most once, so more steps than entries means a cycle: then
    # walk again the careful way, which stops at the first repeat.
    for _ in range(len(by_id) + 1):
        if current is None:
            return backwards
        append(current)
        parent = current.get("parentId")
        current = get(parent) if isinstance(parent, str) else None
    if current is None:
        return backwards
    careful = path_to_root(by_id, leaf.get("id"))
    careful.reverse()
    return careful


def _same(entry: EntryDict) -> EntryDict:
    return entry


class _Projection(Generic[M]):
    """Turns the entries of the context into messages (pi's projectContextEntry)."""

    __slots__ = ("edits", "full", "take")

    def __init__(
        self,
        take: Callable[[EntryDict], M | None],
        full: Callable[[EntryDict], EntryDict],
        edits: dict[str, ReplacementDict | None],
    ) -> None:
        self.take: Callable[[EntryDict], M | None] = take
        self.full = full
        self.edits = edits

    def compaction(self, messages: list[M], compaction: EntryDict) -> None:
        """The latest compaction's contribution: its saved system checkpoint, then its summary."""
        produced: list[MessageDict] = []
        checkpoint = compaction.get("systemMessage")
        if isinstance(checkpoint, dict):
            produced.append(checkpoint)
        summary: MessageDict = {"role": "compactionSummary", "summary": compaction.get("summary", "")}
        if "tokensBefore" in compaction:  # reported as stored: no invented 0
            summary["tokensBefore"] = compaction["tokensBefore"]
        summary["timestamp"] = iso_to_ms(compaction.get("timestamp"))
        produced.append(summary)
        if self.edits and compaction.get("id") in self.edits:
            produced = apply_edit(produced, self.edits[compaction["id"]])
        messages.extend(produced)

    def extend(
        self,
        messages: list[M],
        backwards: list[EntryDict],
        start: int,
        stop: int,
        *,
        drop_system: bool = False,
    ) -> None:
        """Messages of ``backwards[start]`` down to ``backwards[stop + 1]`` (root-to-leaf order)."""
        append, take, edits = messages.append, self.take, self.edits
        for index in range(start, stop, -1):
            entry = backwards[index]
            stored = entry.get("type") == "message"
            if stored and drop_system and is_system_message_entry(self.full(entry)):
                continue
            if edits and entry.get("id") in edits:
                messages.extend(self._edited(entry))
                continue
            message = take(entry) if stored else entry_to_message(entry)
            if message is not None:
                append(message)

    def _edited(self, entry: EntryDict) -> list[MessageDict]:
        if entry.get("type") == "message":
            stored = self.full(entry).get("message")
            produced = [normalized(stored)] if isinstance(stored, dict) else []
        else:
            message = entry_to_message(entry)
            produced = [] if message is None else [message]
        return apply_edit(produced, self.edits[entry["id"]])
