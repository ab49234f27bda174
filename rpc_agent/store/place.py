"""Where a session lives: the one value every constructor in opening.py builds and hands on.

A session is opened in six ways (new, from a file, read-only, in memory, continued, copied),
and each ends up naming the same five things; they travel together so that a new one (or a
new way to open) changes this class and its builders, not every signature in between.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rpc_agent.protocol.shapes import HeaderDict
from rpc_agent.store.blobs import BlobStore


@dataclass(frozen=True, slots=True)
class SessionPlace:
    """The working folder, the header, and (for a session with a file) its folder, its path
    and the blob store its images go to; all None for a session that is never written."""

    cwd: str
    header: HeaderDict
    session_dir: Path | None = None
    session_file: Path | None = None
    blobs: BlobStore | None = None
