"""Starting a tool's process with nothing of ours open in it but what we hand over.

On uvloop, a child started through the event loop (``anyio.open_process``) inherits libuv's
copies of its stdio descriptors and some of the loop's own: libuv has no close-on-exec sweep for
them (``ls /proc/<pid>/fd`` of a child shows a second and third copy of its stdout socket and a
pipe of the loop). A background job that properly detaches (``cmd </dev/null >/dev/null 2>&1 &``)
then still holds a copy of the output, so ``bash`` cannot tell it apart from one that kept the
pipe, and waits for it. The standard library's ``subprocess`` closes every descriptor but 0-2
in the child (``close_fds``), on every loop; the process is then watched through a pidfd.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
import anyio.abc

_POLL_INTERVAL = 0.02
"""Seconds between checks for the exit, where pidfds are not available."""


class _PipeReader(anyio.abc.ByteReceiveStream):
    """The read end of a pipe, read without a thread (the descriptor is made non-blocking)."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd: int | None = fd

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            if self._fd is None:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            return data

    async def aclose(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            anyio.notify_closing(fd)
            os.close(fd)


class PopenProcess(anyio.abc.Process):
    """An :class:`anyio.abc.Process` over :class:`subprocess.Popen` (stdout only)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        assert popen.stdout is not None
        self._stdout = _PipeReader(os.dup(popen.stdout.fileno()))
        popen.stdout.close()
        self._pidfd: int | None = None
        with contextlib.suppress(AttributeError, OSError):
            self._pidfd = os.pidfd_open(popen.pid)

    async def wait(self) -> int:
        while (code := self._popen.poll()) is None:
            if self._pidfd is not None:
                await anyio.wait_readable(self._pidfd)
            else:
                await anyio.sleep(_POLL_INTERVAL)
        self._close_pidfd()
        return code

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def send_signal(self, signal: int) -> None:
        self._popen.send_signal(signal)

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    @property
    def stdin(self) -> anyio.abc.ByteSendStream | None:
        return None

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream | None:
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        return None

    async def aclose(self) -> None:
        await self._stdout.aclose()
        await self.wait()

    def _close_pidfd(self) -> None:
        fd, self._pidfd = self._pidfd, None
        if fd is not None:
            anyio.notify_closing(fd)
            os.close(fd)


def open_process(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> PopenProcess:
    """Start ``argv`` in a new session: stdin on /dev/null, stdout and stderr on one pipe.

    Raises OSError when it cannot start. Spawning is quick (posix_spawn or vfork), so it runs
    right on the event loop.
    """
    popen = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        close_fds=True,
    )
    return PopenProcess(popen)
