"""Kills the tools' process groups if the process that started them dies without doing it.

A server kills its tools' process groups itself on every path it controls (abort, timeout, EOF,
SIGTERM). SIGKILL leaves it none, and a killed group's commands would live on as orphans. A
``Reaper`` is one small ``bash`` in a session of its own that reads lines ``+ pgid`` / ``- pgid``
from a pipe only the server holds; the pipe ends when the server does, however it ends, and the
groups still registered then are killed. A server that exits normally has unregistered its tools
already, so the reaper just leaves.

It is owned by whoever runs tools for a process (the front's ``Runtime``), started on the first
command and closed with its owner; a ``ToolContext`` without one still kills its commands on
every path but the owner's sudden death.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess

__all__ = ["Reaper"]

_SCRIPT = (
    'live=" "; while read -r op id; do case $op in "+") live="$live$id ";; '
    '"-") live=${live/ $id / };; esac; done; for id in $live; do kill -KILL -- "-$id"; done'
)

CLOSE_WAIT = 1.0
"""Seconds ``close`` waits for the reaper to read the end of its pipe and exit."""


class Reaper:
    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Before a command starts: the window between its spawn and ``watch`` stays short."""
        if self._process is not None and self._process.poll() is None:
            return
        try:
            self._process = subprocess.Popen(
                [shutil.which("bash") or "/bin/bash", "-c", _SCRIPT],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            self._process = None

    def watch(self, pgid: int) -> None:
        self._send(f"+ {pgid}\n")

    def forget(self, pgid: int) -> None:
        self._send(f"- {pgid}\n")

    def close(self) -> None:
        """End the pipe as the owner's death would: groups still registered are killed."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(CLOSE_WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _send(self, line: str) -> None:
        process = self._process
        if process is None or process.stdin is None:
            return
        try:
            process.stdin.write(line.encode())
            process.stdin.flush()
        except OSError:
            # The reaper is gone. The tools are still killed on every path but the owner's own
            # sudden death, and a tool must not fail for it; the next command starts a new one.
            self.close()
