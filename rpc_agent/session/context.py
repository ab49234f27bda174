"""What the model sees: the path from the leaf to the root, turned into messages.

Pure functions over plain entry dicts, so they can be tested without files and reused by the
compaction and navigation code. Nothing here recurses: a 100,000-entry chain is walked in a
loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

JsonDict = dict[str, Any]


@dataclass(slots=True)
class ModelRef:
    provider: str
    modelId: str


@dataclass(slots=True)
class SessionContext:
    messages: list[JsonDict] = field(default_factory=list)
    thinkingLevel: str = "off"
    model: ModelRef | None = None


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


def path_to_root(by_id: Mapping[str, JsonDict], leaf_id: str | None) -> list[JsonDict]:
    """Entries from the root down to ``leaf_id``; a missing parent ends the walk.

    A cycle (a corrupt file where an entry is its own ancestor) also ends the walk instead of
    looping forever.
    """
    path: list[JsonDict] = []
    seen: set[str] = set()
    current = by_id.get(leaf_id) if leaf_id is not None else None
    while current is not None:
        cid = current.get("id")
        if cid in seen:
            break
        seen.add(cid)  # type: ignore[arg-type]
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


def entry_to_message(entry: JsonDict) -> JsonDict | None:
    """The message an entry contributes to the context, or None for bookkeeping entries."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        return message if isinstance(message, dict) else None
    if kind == "custom_message":
        message = {
            "role": "custom",
            "customType": entry.get("customType", ""),
            "content": entry.get("content", ""),
            "display": entry.get("display", True),
            "timestamp": iso_to_ms(entry.get("timestamp")),
        }
        if entry.get("details") is not None:
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
    entries: Sequence[JsonDict],
    leaf_id: str | None,
    by_id: Mapping[str, JsonDict] | None = None,
    *,
    leaf_is_explicit: bool = True,
) -> SessionContext:
    """Build the model's context for the branch ending at ``leaf_id``.

    ``leaf_id`` None with ``leaf_is_explicit`` means "before the first entry" (an empty
    context, as after navigating to the root user message); an unknown id, or None with
    ``leaf_is_explicit=False``, falls back to the last entry in file order.
    """
    if by_id is None:
        by_id = {e["id"]: e for e in entries if isinstance(e.get("id"), str)}
    if leaf_id is None and leaf_is_explicit:
        return SessionContext()
    leaf = by_id.get(leaf_id) if leaf_id is not None else None
    if leaf is None:
        if not entries:
            return SessionContext()
        leaf = entries[-1]
    path = path_to_root(by_id, leaf.get("id"))

    context = SessionContext()
    compaction_index = -1
    for index, entry in enumerate(path):
        kind = entry.get("type")
        if kind == "thinking_level_change":
            level = entry.get("thinkingLevel")
            if isinstance(level, str):
                context.thinkingLevel = level
        elif kind == "model_change":
            provider, model_id = entry.get("provider"), entry.get("modelId")
            if isinstance(provider, str) and isinstance(model_id, str):
                context.model = ModelRef(provider, model_id)
            elif isinstance(entry.get("model"), str) and entry.get("role", "default") == "default":
                context.model = parse_model_string(entry["model"])
        elif kind == "message":
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                provider, model_id = message.get("provider"), message.get("model")
                if isinstance(provider, str) and isinstance(model_id, str):
                    context.model = ModelRef(provider, model_id)
        elif kind == "compaction":
            compaction_index = index

    messages = context.messages
    if compaction_index >= 0:
        compaction = path[compaction_index]
        messages.append(
            {
                "role": "compactionSummary",
                "summary": compaction.get("summary", ""),
                "tokensBefore": compaction.get("tokensBefore", 0),
                "timestamp": iso_to_ms(compaction.get("timestamp")),
            }
        )
        first_kept = compaction.get("firstKeptEntryId")
        keeping = False
        for entry in path[:compaction_index]:
            if entry.get("id") == first_kept:
                keeping = True
            if keeping:
                _append(messages, entry)
        for entry in path[compaction_index + 1 :]:
            _append(messages, entry)
    else:
        for entry in path:
            _append(messages, entry)
    return context


def _append(messages: list[JsonDict], entry: JsonDict) -> None:
    message = entry_to_message(entry)
    if message is not None:
        messages.append(message)
