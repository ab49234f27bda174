"""Which processes are running, read from /proc: for tests that check nothing outlives a server."""

from __future__ import annotations

import os
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped counts as gone)."""
    try:
        state = _stat_fields(Path(f"/proc/{pid}"))[0]
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def processes_running(marker: str, parent: int | None = None) -> list[int]:
    """Pids whose command line holds ``marker`` (read from /proc; nothing is signalled), only
    the children of ``parent`` when it is given. A zombie has an empty command line, so it is
    never among them."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if parent is not None and int(_stat_fields(entry)[1]) != parent:
                continue
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(entry.name))
    return found


def _stat_fields(entry: Path) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command's name (which may hold spaces and
    parentheses): the state first, then the parent pid."""
    return (entry / "stat").read_text().rsplit(")", 1)[1].split()
