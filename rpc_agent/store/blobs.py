"""Keeping session lines small: large images go to a blob store, huge strings are cut.

A pasted screenshot is hundreds of kilobytes of base64; written inline, every session listing
and every load pays for it again. Images whose base64 is 1,024 characters or more are stored
once under ``blobs/<sha256>`` (content-addressed, so the same image costs one file) and the
line keeps ``blob:sha256:<hash>``. On load the reference is turned back into base64.

Decoding, hashing and writing a big image takes a while (a 60 MB one, seconds), and appends
run on the event loop, where every other request would wait for it. So the work is done
beforehand in a worker thread (:func:`stage_images`, awaited before the append), and the
append only looks the reference up.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import os
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio.to_thread

from rpc_agent.protocol.base import JsonDict
from rpc_agent.protocol.shapes import EntryDict

MAX_PERSIST_CHARS = 500_000
TRUNCATION_NOTICE = "[Session persistence truncated large content]"
BLOB_MIN_BASE64 = 1024
BLOB_PREFIX = "blob:sha256:"
STAGE_MIN_BASE64 = 256 * 1024
"""Images this big are stored in a worker thread ahead of their append; smaller ones cost little."""
TRANSIENT_FIELDS = ("partialJson", "jsonlEvents")
_STAGED_KEPT = 32
"""Staged references remembered; more only happens with many images queued at once."""


class BlobStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._staged: OrderedDict[int, tuple[str, str]] = OrderedDict()
        """id(base64 string) -> (that string, its reference): images stored ahead of their append."""

    def stage(self, data: str) -> None:
        """Store one image's base64 now (worker thread), so that writing its line is only a lookup."""
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return  # written inline (cut if huge), as an undecodable image always was
        ref = self.put(raw)
        self._staged[id(data)] = (data, ref)
        while len(self._staged) > _STAGED_KEPT:
            self._staged.popitem(last=False)

    def staged(self, data: str) -> str | None:
        """The reference of an image stored by :meth:`stage` (the very same string object)."""
        found = self._staged.get(id(data))
        return found[1] if found is not None and found[0] is data else None

    def put(self, data: bytes) -> str:
        """Store bytes durably; returns the reference to keep in the session line."""
        digest = hashlib.sha256(data).hexdigest()
        target = self.folder / digest
        try:
            # Reused: a deletion elsewhere keeps a blob touched this recently (deleting.py).
            os.utime(target)
        except FileNotFoundError:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.folder / f".{digest}.{uuid.uuid4().hex[:8]}.tmp"
            with tmp.open("wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
        except OSError:
            pass  # there, only not ours to touch
        return BLOB_PREFIX + digest

    def get(self, ref: str) -> bytes | None:
        if not ref.startswith(BLOB_PREFIX):
            return None
        digest = ref[len(BLOB_PREFIX) :]
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            return None
        try:
            return (self.folder / digest).read_bytes()
        except OSError:
            return None


def _truncate(value: Any) -> Any:
    if isinstance(value, str):
        if len(value) > MAX_PERSIST_CHARS:
            return value[:MAX_PERSIST_CHARS] + "\n" + TRUNCATION_NOTICE
        return value
    if isinstance(value, list):
        return [_truncate(item) for item in value]
    if isinstance(value, dict):
        return {key: _truncate(item) for key, item in value.items() if key not in TRANSIENT_FIELDS}
    return value


def _content_lists(entry: Mapping[str, Any]) -> list[list[Any]]:
    """The content arrays of an entry (or a message) that may hold image blocks."""
    lists: list[list[Any]] = []
    message = entry.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        lists.append(message["content"])
    if isinstance(entry.get("content"), list):
        lists.append(entry["content"])
    return lists


def prepare_for_disk(entry: Mapping[str, Any], blobs: BlobStore | None) -> Mapping[str, Any]:
    """A copy of ``entry`` as it should be written; the in-memory entry keeps its full data.

    Only entries that need it are copied: the common case (no huge string, no big image)
    returns the entry itself.
    """
    needs_blob = blobs is not None and any(
        isinstance(block, dict)
        and block.get("type") == "image"
        and isinstance(block.get("data"), str)
        and len(block["data"]) >= BLOB_MIN_BASE64
        and not block["data"].startswith(BLOB_PREFIX)
        for content in _content_lists(entry)
        for block in content
    )
    if needs_blob and blobs is not None:
        return _copy_with_blobs(entry, blobs)
    if _has_oversize(entry):
        truncated: Mapping[str, Any] = _truncate(entry)
        return truncated
    return entry


def _has_oversize(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) > MAX_PERSIST_CHARS:
                return True
        elif isinstance(item, dict):
            if any(key in item for key in TRANSIENT_FIELDS):
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _copy_with_blobs(entry: Mapping[str, Any], blobs: BlobStore) -> Mapping[str, Any]:
    copy: JsonDict = {}
    for key, value in entry.items():
        if key == "message" and isinstance(value, dict):
            copy[key] = {
                k: (_externalize(v, blobs) if k == "content" else _truncate(v))
                for k, v in value.items()
                if k not in TRANSIENT_FIELDS
            }
        elif key == "content":
            copy[key] = _externalize(value, blobs)
        elif key not in TRANSIENT_FIELDS:
            copy[key] = _truncate(value)
    return copy


def _externalize(content: Any, blobs: BlobStore) -> Any:
    if not isinstance(content, list):
        return _truncate(content)
    result = []
    for block in content:
        data = block.get("data") if isinstance(block, dict) else None
        if (
            isinstance(block, dict)
            and block.get("type") == "image"
            and isinstance(data, str)
            and len(data) >= BLOB_MIN_BASE64
            and not data.startswith(BLOB_PREFIX)
        ):
            ref = blobs.staged(data)
            if ref is None:
                try:
                    raw = base64.b64decode(data, validate=True)
                except (binascii.Error, ValueError):
                    result.append(_truncate(block))
                    continue
                ref = blobs.put(raw)
            result.append({**block, "data": ref})
        else:
            result.append(_truncate(block))
    return result


def _big_images(entry: Mapping[str, Any]) -> list[str]:
    return [
        block["data"]
        for content in _content_lists(entry)
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "image"
        and isinstance(block.get("data"), str)
        and len(block["data"]) >= STAGE_MIN_BASE64
        and not block["data"].startswith(BLOB_PREFIX)
    ]


async def stage_images(entry: Mapping[str, Any], blobs: BlobStore | None) -> None:
    """Store an entry's (or a message's) big images in a worker thread before it is appended (see the module doc)."""
    if blobs is None:
        return
    for data in _big_images(entry):
        if blobs.staged(data) is None:
            await anyio.to_thread.run_sync(blobs.stage, data)


def restore_blobs(entry: EntryDict, blobs: BlobStore) -> None:
    """Turn blob references in an entry's image blocks back into base64, in place.

    A reference whose blob is missing stays as it is: the entry still loads, and the provider
    layer will see a reference instead of data rather than the session failing to open.
    """
    for content in _content_lists(entry):
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "image":
                continue
            data = block.get("data")
            if isinstance(data, str) and data.startswith(BLOB_PREFIX):
                raw = blobs.get(data)
                if raw is not None:
                    with contextlib.suppress(ValueError):
                        block["data"] = base64.b64encode(raw).decode("ascii")
