"""The disk as the file tools' FileAccess (what they use unless a front passes another)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

import anyio.to_thread


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


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step (temp file in the same folder, then rename).

    A symlink is followed, so the link stays and its target changes; an existing file keeps
    its permission bits, a new one gets the usual ``0o666 & ~umask``.
    """
    target = path.resolve() if path.is_symlink() else path
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
