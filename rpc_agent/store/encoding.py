"""Entries as they are written: blobs out, huge strings cut, transient fields dropped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from rpc_agent.protocol.base import JsonDict
from rpc_agent.store.blobs import MAX_PERSIST_CHARS, BlobStore, prepare_for_disk
from rpc_agent.store.index import new_entry_id
from rpc_agent.store.migrations import file_version, migrate


def encode_for_disk(lines: Sequence[Mapping[str, Any]], blobs: BlobStore | None) -> bytes:
    """The lines as written, each with its newline.

    ``prepare_for_disk`` walks the whole entry in Python; the encoded bytes tell more cheaply
    whether it can change anything: a string over the limit makes the line longer than the
    limit, a transient field or an image block shows its name. Otherwise the bytes are final.
    """
    dumps, option = orjson.dumps, orjson.OPT_APPEND_NEWLINE
    out: list[bytes] = []
    for line in lines:
        data = dumps(line, option=option)
        if (
            len(data) > MAX_PERSIST_CHARS
            or b'"partialJson"' in data
            or b'"jsonlEvents"' in data
            or (blobs is not None and b'"image"' in data)
        ):
            data = dumps(prepare_for_disk(line, blobs), option=option)
        out.append(data)
    return b"".join(out)


def migrate_lines(lines: list[JsonDict]) -> int | None:
    """Migrate parsed lines in place; the version migrated from, or None when current."""
    version = file_version(lines)
    if not migrate(lines, new_entry_id):
        return None
    return version
