"""Reading the text out of a message's content (a string, or a list of blocks)."""

from __future__ import annotations

from typing import Any


def message_text(content: Any, separator: str = "") -> str:
    """The text blocks of ``content`` joined by ``separator``; images and tool calls are skipped.

    Callers choose the separator for their reader: ``""`` gives the text as the model wrote it,
    ``" "`` a one-line preview, ``"\\n"`` a transcript for a summary prompt.
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return separator.join(
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""
