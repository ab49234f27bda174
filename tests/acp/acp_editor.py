"""The editor side of the ACP tests: a client with file buffers and terminals, as Zed has.

The agent's ``fs/*`` and ``terminal/*`` requests land here when a test advertises ``EDITOR``;
the terminals are real subprocesses.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    EnvVariable,
    FileSystemCapabilities,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acp_testlib import RecordingClient

from acp import RequestError


@dataclass
class _Terminal:
    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    limit: int | None = None
    truncated: bool = False
    reader: asyncio.Task[None] | None = None


@dataclass
class EditorClient(RecordingClient):
    """A client with an editor's file buffers and terminals (``fs`` and ``terminal`` on).

    Buffers hold unsaved text (``buffers[path]``); a read falls back to the disk, a write goes
    to the buffer only, as an editor that has the file open would do. Terminals run real
    processes in a process group of their own.
    """

    buffers: dict[str, str] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    terminals: dict[str, _Terminal] = field(default_factory=dict)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        self.calls.append(f"read {path}")
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text())
        except OSError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        self.calls.append(f"write {path}")
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.calls.append(f"terminal/create {terminal_id}")
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal = _Terminal(process, limit=output_byte_limit)

        async def read() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(65536):
                terminal.output += chunk
                if terminal.limit is not None and len(terminal.output) > terminal.limit:
                    del terminal.output[: len(terminal.output) - terminal.limit]
                    terminal.truncated = True

        terminal.reader = asyncio.ensure_future(read())
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        self.calls.append(f"terminal/output {terminal_id}")
        terminal = self.terminals[terminal_id]
        return TerminalOutputResponse(
            output=terminal.output.decode("utf-8", "replace"), truncated=terminal.truncated
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self.calls.append(f"terminal/wait_for_exit {terminal_id}")
        terminal = self.terminals[terminal_id]
        code = await terminal.process.wait()
        if terminal.reader is not None:
            await terminal.reader
        if code < 0:
            return WaitForTerminalExitResponse(signal=signal.Signals(-code).name)
        return WaitForTerminalExitResponse(exit_code=code)

    def _kill(self, terminal: _Terminal) -> None:
        if terminal.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(terminal.process.pid, signal.SIGKILL)

    async def _end(self, what: str, terminal_id: str) -> None:
        self.calls.append(f"terminal/{what} {terminal_id}")
        terminal = self.terminals[terminal_id]
        self._kill(terminal)
        await terminal.process.wait()

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse | None:
        await self._end("kill", terminal_id)
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse | None:
        await self._end("release", terminal_id)
        return ReleaseTerminalResponse()

    def close_terminals(self) -> None:
        for terminal in self.terminals.values():
            self._kill(terminal)


EDITOR = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
)
"""What an editor such as Zed advertises."""
