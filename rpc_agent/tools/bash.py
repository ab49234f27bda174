"""``bash``: run a shell command in the working directory, streaming its output.

The command runs as ``bash -c`` in a session (and so a process group) of its own, with stdin
closed and stderr merged into stdout. Output is decoded as UTF-8 (bad bytes become U+FFFD).
Memory stays bounded: past the output limits the raw output goes to a temp file and only a
tail is kept in memory. Disk stays bounded too: the temp file stops at ``FULL_OUTPUT_CAP``, and
it belongs to the session (``ToolContext.temp_files``), which removes it when it closes. On timeout or cancellation the whole process group is killed, SIGTERM
first and SIGKILL after a short grace, and a cancellation is re-raised.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable

import anyio
from anyio.abc import ByteReceiveStream, Process
from pydantic import Field

from rpc_agent.tools import sandboxed
from rpc_agent.tools._common import BuiltinTool, ToolArgs
from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput
from rpc_agent.tools.sandboxed import wrap as sandbox_wrap
from rpc_agent.tools.spawn import open_process
from rpc_agent.tools.temp_files import TempFiles
from rpc_agent.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    Truncation,
    format_size,
    truncate_tail,
)

UPDATE_INTERVAL = 0.1
"""Seconds between two partial-output updates, at most one per interval."""
KILL_GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL when the process group is killed."""
DRAIN_IDLE = 0.5
"""After bash exits: how long a background process may hold the output pipe silently."""
_READ_SIZE = 65536
FULL_OUTPUT_CAP = 50 * 1024 * 1024
"""Bytes of a command's output saved to its temp file; past that the file stops growing."""
_TAIL_CHARS = 2 * DEFAULT_MAX_BYTES
"""Characters of decoded output kept in memory: enough for the byte limit (a char is >= 1 byte)."""


class BashArgs(ToolArgs):
    command: str = Field(min_length=1, description="The bash command (or script) to run.")
    timeout: float | None = Field(
        default=None,
        gt=0,
        description="Timeout in seconds; the command and all its child processes are killed when "
        "it expires. Default: no timeout.",
    )


class _Output:
    """Collects a command's output: a bounded tail in memory, the rest in a temp file."""

    def __init__(self, temp_files: TempFiles, on_text: Callable[[str], None] | None = None) -> None:
        self._temp_files = temp_files
        self._on_text = on_text
        self.saved_bytes = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head = bytearray()
        self._fd: int | None = None
        self.full_path: str | None = None
        self.total_bytes = 0
        self.newlines = 0
        self._chunks: list[str] = []
        self._chars = 0
        self.version = 0
        self.reported = 0
        """The ``version`` the last update carried."""
        self.last_data = time.monotonic()

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        self.last_data = time.monotonic()
        if self._fd is None:
            self._head.extend(data)
        else:
            self._write(data)
        text = self._decoder.decode(data)
        self._append(text)
        if text and self._on_text is not None:
            self._on_text(text)
        if self._fd is None and (self.total_bytes > DEFAULT_MAX_BYTES or self.newlines >= DEFAULT_MAX_LINES):
            self._spill()
        self.version += 1

    def finish(self) -> None:
        text = self._decoder.decode(b"", final=True)
        self._append(text)
        if text and self._on_text is not None:
            self._on_text(text)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def keep_file(self) -> None:
        """Make sure the full output is on disk (it may all still be in memory)."""
        if self.full_path is None:
            self._spill()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def discard_file(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.full_path is not None:
            self._temp_files.remove(self.full_path)
            self.full_path = None

    def text(self) -> str:
        if len(self._chunks) > 1:
            self._chunks = ["".join(self._chunks)]
        return self._chunks[0] if self._chunks else ""

    def total_lines(self) -> int:
        if self.total_bytes == 0:
            return 0
        return self.newlines + (0 if self.text().endswith("\n") else 1)

    def _append(self, text: str) -> None:
        if not text:
            return
        self._chunks.append(text)
        self._chars += len(text)
        self.newlines += text.count("\n")
        if self._chars > 2 * _TAIL_CHARS:
            kept = "".join(self._chunks)[-_TAIL_CHARS:]
            self._chunks = [kept]
            self._chars = len(kept)

    def _spill(self) -> None:
        fd, self.full_path = tempfile.mkstemp(prefix="rpc-agent-bash-", suffix=".log")
        self._temp_files.add(self.full_path)
        self._fd = fd
        self._write(bytes(self._head))
        self._head = bytearray()

    def _write(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)[: max(0, FULL_OUTPUT_CAP - self.saved_bytes)]
        self.saved_bytes += len(view)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]


def _group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies waiting to be reaped do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as handle:
                stat_line = handle.read()
        except OSError:
            continue
        fields = stat_line[stat_line.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


async def kill_process_group(process: Process) -> None:
    """SIGTERM the process's group, SIGKILL it if anything is left after the grace; reap."""
    with anyio.CancelScope(shield=True):
        pgid = process.pid
        _signal_group(pgid, signal.SIGTERM)
        with anyio.move_on_after(KILL_GRACE):
            # Polling: nothing signals when the last process of a group is gone.
            while _group_alive(pgid):  # noqa: ASYNC110
                await anyio.sleep(0.02)
        if _group_alive(pgid):
            _signal_group(pgid, signal.SIGKILL)
        with anyio.move_on_after(KILL_GRACE):
            await process.wait()


def _report(output: _Output, ctx: ToolContext) -> None:
    output.reported = output.version
    ctx.on_update(_partial(output))


def _partial(output: _Output) -> ToolOutput:
    result = truncate_tail(output.text())
    return ToolOutput.text(result.content.removesuffix("\n"), details={"truncated": result.truncated})


class BashTool(BuiltinTool[BashArgs]):
    name = "bash"
    description = (
        "Run a bash command in the working directory (`bash -c`, stdin closed, stderr merged into "
        "stdout) and return its output and exit code. Output streams while the command runs. Only "
        f"the last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB of output are "
        "returned (whichever comes first); when cut, the full output is saved to a temp file whose "
        "path is given, to read or grep. Set timeout (seconds) for commands that might hang; on "
        "timeout the command and its children are killed. Nothing is interactive: pass flags like "
        "`-y` and avoid pagers and editors. Use bash for builds, tests, git and other programs; "
        "prefer read, edit, write, grep, find and ls for files."
    )

    async def run(self, params: BashArgs, ctx: ToolContext) -> ToolOutput:
        if ctx.commands is not None:
            return await ctx.commands.run(params.command, params.timeout, ctx)
        if not ctx.cwd.is_dir():
            raise ToolError(f"The working directory does not exist: {ctx.cwd}")
        output = await self._spawn(params, ctx, sandboxed=True)
        note = sandboxed.refusal_note(output, ctx)
        if note is None:
            return output
        if ctx.escape is not None and await ctx.escape(params.command):
            # The host let this one command run outside the sandbox.
            output = await self._spawn(params, ctx, sandboxed=False)
            return sandboxed.with_note(output, "[Ran outside the sandbox: the user approved it.]")
        return sandboxed.with_note(output, note)

    async def _spawn(self, params: BashArgs, ctx: ToolContext, *, sandboxed: bool) -> ToolOutput:
        shell = shutil.which("bash") or "/bin/bash"
        argv, env = [shell, "-c", params.command], ctx.process_env()
        if sandboxed:
            argv, env = sandbox_wrap(argv, env, ctx)
        reaper = ctx.reaper
        if reaper is not None:
            reaper.start()
        try:
            process = open_process(argv, cwd=ctx.cwd, env=env)
        except OSError as exc:
            raise ToolError(f"Could not start bash: {exc}") from None
        if reaper is None:
            return await self._execute(params, process, ctx)
        reaper.watch(process.pid)
        try:
            return await self._execute(params, process, ctx)
        finally:
            reaper.forget(process.pid)

    async def _execute(self, params: BashArgs, process: Process, ctx: ToolContext) -> ToolOutput:
        output = _Output(ctx.temp_files, ctx.on_output)
        timed_out = False
        detached = False
        try:
            with anyio.move_on_after(params.timeout) as deadline:
                detached = await self._run(process, output, ctx)
            if deadline.cancelled_caught:
                timed_out = True
                await kill_process_group(process)
                await self._drain(process, output)
        except BaseException:
            if output.version != output.reported:
                # The last tick may be up to an interval old: whoever keeps what an aborted
                # command printed (the user's bash, a tool's partial result) gets all of it.
                _report(output, ctx)
            await kill_process_group(process)
            output.discard_file()
            with anyio.CancelScope(shield=True):
                await process.aclose()
            raise
        with anyio.CancelScope(shield=True):
            await process.aclose()
        output.finish()
        return self._result(params, process.returncode, output, timed_out=timed_out, detached=detached)

    async def _run(self, process: Process, output: _Output, ctx: ToolContext) -> bool:
        """Stream until bash exits and its output ends; True if a background process kept the pipe."""
        stream = process.stdout
        assert stream is not None
        eof = anyio.Event()

        async def pump() -> None:
            await self._read_all(stream, output)
            eof.set()

        async def tick() -> None:
            while True:
                await anyio.sleep(UPDATE_INTERVAL)
                if output.version != output.reported:
                    _report(output, ctx)

        detached = False
        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            group.start_soon(tick)
            await process.wait()
            while not eof.is_set():
                with anyio.move_on_after(DRAIN_IDLE):
                    await eof.wait()
                if not eof.is_set() and time.monotonic() - output.last_data >= DRAIN_IDLE:
                    detached = True
                    break
            group.cancel_scope.cancel()
        return detached

    @staticmethod
    async def _read_all(stream: ByteReceiveStream, output: _Output) -> None:
        try:
            while True:
                output.feed(await stream.receive(_READ_SIZE))
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def _drain(self, process: Process, output: _Output) -> None:
        """After a kill: pick up what the processes wrote before they died."""
        if process.stdout is not None:
            with anyio.move_on_after(DRAIN_IDLE):
                await self._read_all(process.stdout, output)

    def _result(
        self, params: BashArgs, code: int | None, output: _Output, *, timed_out: bool, detached: bool
    ) -> ToolOutput:
        result: Truncation = truncate_tail(output.text())
        truncated = result.truncated
        if truncated:
            output.keep_file()
        else:
            output.discard_file()
        text = result.content.removesuffix("\n") or "(no output)"
        notes: list[str] = []
        if truncated:
            total_lines = output.total_lines()
            first = total_lines - result.output_lines + 1
            where = f"Full output: {output.full_path}"
            if output.saved_bytes < output.total_bytes:
                where = (
                    f"The first {format_size(output.saved_bytes)} of the output were saved to "
                    f"{output.full_path}; the rest was not kept"
                )
            shown = (
                f"the end of line {total_lines}"
                if result.last_line_partial
                else f"lines {first}-{total_lines} of {total_lines}"
            )
            notes.append(
                f"[Output truncated: showing {shown} ({format_size(result.output_bytes)} of "
                f"{format_size(output.total_bytes)}). {where}]"
            )
        if detached:
            notes.append(
                "[bash exited but a background process still holds its output; "
                "later output is not captured. Redirect background output to a file.]"
            )
        is_error = False
        if timed_out:
            is_error = True
            notes.append(
                f"Command timed out after {params.timeout:g} seconds; it and its child processes were killed."
            )
        elif code is not None and code != 0:
            is_error = True
            if code < 0:
                notes.append(f"Command was killed by signal {-code}.")
            else:
                notes.append(f"Command exited with code {code}.")
        if notes:
            text += "\n\n" + "\n".join(notes)
        details = {
            "exitCode": code,
            "truncated": truncated,
            "fullOutputPath": output.full_path,
            "timedOut": timed_out,
        }
        return ToolOutput.text(text, details=details, is_error=is_error)
