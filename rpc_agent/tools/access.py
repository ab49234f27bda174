"""The disk as the file tools' FileAccess (what they use unless a front passes another)."""

from __future__ import annotations

from pathlib import Path

import anyio.to_thread

from rpc_agent.tools._common import atomic_write


def _read(path: Path) -> str:
    # surrogateescape: bytes that are not UTF-8 survive a read-edit-write round trip.
    return path.read_bytes().decode("utf-8", "surrogateescape")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8", "surrogateescape"))


class DiskFiles:
    """Files as they are on disk; a write is atomic and creates missing parent folders."""

    async def read_text(self, path: Path) -> str:
        return await anyio.to_thread.run_sync(_read, path)

    async def write_text(self, path: Path, text: str) -> None:
        await anyio.to_thread.run_sync(_write, path, text)
