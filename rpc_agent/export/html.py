"""The HTML export of a session: the whole tree, embedded once as JSON, drawn by the page.

The page is one file with its CSS and JS inlined (``page.css``, ``page.js`` and
``page.html`` beside this module), so it opens offline and can be mailed or attached to a bug.
Nothing from the session is turned into markup here: entries travel as JSON inside a
``<script type="application/json">`` element (with ``<``, ``>`` and ``&`` escaped so no string
can close it) and the page builds the DOM from that data, escaping text as it goes. The tree
is drawn as a virtual list and a path is rendered only when it is clicked, which is what lets a
session of many thousands of entries open without freezing the browser.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, TypedDict

import orjson

from rpc_agent import __version__
from rpc_agent.protocol.base import pruned
from rpc_agent.protocol.shapes import EntryDict
from rpc_agent.store import files
from rpc_agent.store.manager import SessionManager

DROPPED_FIELDS = frozenset({"thinkingSignature", "textSignature", "partialJson", "jsonlEvents"})
"""Opaque provider tokens and transient fields: large, and nothing a reader can use."""

FileChanges = Mapping[str, Sequence[Mapping[str, object]]]
"""Entry id -> the files its checkpoint changed: ``{path, status, diff, binary, truncated}``."""


class PageSession(TypedDict):
    id: str
    name: str | None
    cwd: str
    timestamp: str | None
    parentSession: str | None
    file: str | None


class PageNode(TypedDict):
    entry: EntryDict
    """Without ``DROPPED_FIELDS``."""
    parentId: str | None
    label: str | None


class PageData(TypedDict):
    """What the page's script reads (``page.js``); ``format`` changes when that does."""

    format: int
    title: str
    session: PageSession
    leafId: str | None
    exportedAt: str
    generator: str
    nodes: list[PageNode]
    fileChanges: FileChanges


@cache
def _asset(name: str) -> str:
    from importlib import resources  # only when a page is written: it slows the server's start

    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _dropped(key: str, _value: Any) -> bool:
    return key in DROPPED_FIELDS


def _title(manager: SessionManager) -> str:
    if manager.session_name:
        return manager.session_name
    for entry in manager.entries:
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(
                    str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
                )
            text = " ".join(str(content).split())
            if text:
                return text[:80] + ("…" if len(text) > 80 else "")
    return f"Session {manager.session_id}"


def page_data(manager: SessionManager, file_changes: FileChanges | None = None) -> PageData:
    """What the page needs: the tree in depth-first order (children oldest first), the leaf.

    Label entries and leaf markers are not nodes: a label is a field of the node it names.
    Must run where the manager lives (the event loop); the result shares nothing mutable.
    ``file_changes``: entry id -> the files its checkpoint changed, with diffs (shown per turn).
    """
    header = manager.header
    nodes: list[PageNode] = [
        {"entry": pruned(node.entry, _dropped), "parentId": node.parentId, "label": node.label}
        for node in manager.get_tree()
    ]
    return {
        "format": 1,
        "title": _title(manager),
        "session": {
            "id": manager.session_id,
            "name": manager.session_name,
            "cwd": manager.cwd,
            "timestamp": header.get("timestamp"),
            "parentSession": header.get("parentSession"),
            "file": str(manager.session_file) if manager.session_file is not None else None,
        },
        "leafId": manager.leaf_id,
        "exportedAt": files.now_iso(),
        "generator": f"rpc-agent {__version__}",
        "nodes": nodes,
        "fileChanges": file_changes or {},
    }


def embed_json(data: PageData) -> str:
    """JSON that is safe inside a ``<script>`` element: no string in it can end the element.

    ``<``, ``>`` and ``&`` only ever occur inside JSON strings, where the escapes mean the same.
    """
    text = orjson.dumps(data).decode()
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def render_page(data: PageData) -> str:
    replacements = {
        "__TITLE__": html.escape(str(data.get("title", "Session"))),
        "/*__CSS__*/": _asset("page.css"),
        "__DATA__": embed_json(data),
        "/*__JS__*/": _asset("page.js"),
    }
    page = _asset("page.html")
    # One pass in template order, so a placeholder-like string inside the data is never expanded.
    out: list[str] = []
    rest = page
    for marker, value in replacements.items():
        before, found, rest = rest.partition(marker)
        if not found:
            raise RuntimeError(f"export template lacks {marker}")
        out.append(before)
        out.append(value)
    out.append(rest)
    return "".join(out)


def write_page(data: PageData, target: Path) -> Path:
    """Render and write atomically (a reader never sees half a page). Blocking: use a thread."""
    files.atomic_write(target, render_page(data).encode("utf-8"))
    return target


def default_output_path(manager: SessionManager) -> Path:
    """Beside the session file (``x.jsonl`` → ``x.html``), or in the cwd for an unsaved one."""
    if manager.session_file is not None:
        return manager.session_file.with_suffix(".html")
    return Path(manager.cwd) / f"session-{manager.session_id}.html"
