"""Which processes are running, read from /proc: for tests that check nothing outlives a server."""

from __future__ import annotations

from pathlib import Path


def processes_running(marker: str) -> list[int]:
    """Pids whose command line holds ``marker`` (read from /proc; nothing is signalled)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(entry.name))
    return found
