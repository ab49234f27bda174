"""One task of a batch: a fresh ``rpc-agent -p`` child process, its result as a result line.

The same function runs in a local pool's thread and inside a Ray task, so it takes and returns
plain picklable values and imports nothing heavy. The child is the unit of failure: whatever
happens to it (a crash, a kill, a hang cut by the timeout) becomes a failed result with the
reason. The child runs in a process group of its own, which a timeout, an interrupt of the
batch or a Ray cancellation stops as a whole: an interrupt first (the run stores what it has
and its session stays valid), then a kill after a grace period.

The session file is named before the run (pi's ``<timestamp>_<id>.jsonl``, in ``--session-dir``
or the working directory's default folder), so a result names it even when the run crashed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

import orjson

from rpc_agent.batch.checkout import CheckoutError, check_out
from rpc_agent.batch.tasks import BatchTask, Outcome, ResultLine
from rpc_agent.protocol.run_output import RunResult
from rpc_agent.store import files

STOP_GRACE = 5.0
"""Seconds an interrupted child has to store what it has before it is killed."""
WAIT_SLICE = 0.5
"""Seconds of each wait for a child (how soon a cancellation is seen)."""
STDERR_TAIL = 600
"""Characters of a failed child's stderr kept in its result's reason."""


@dataclass(frozen=True)
class WorkerOptions:
    """What every task of a batch shares (the batch command's flags)."""

    provider: str | None = None
    faux_script: str | None = None
    session_dir: str | None = None
    model: str | None = None
    timeout: float | None = None
    """Seconds a task may run when it does not say (None: no limit)."""
    checkouts_dir: str | None = None
    """Where the folders of ``repo`` tasks are made (None: the system's temporary folder)."""
    keep_checkouts: bool = False
    python: str | None = None
    """The interpreter that runs ``-m rpc_agent`` (None: the one running this code)."""


class ChildExit(NamedTuple):
    """How a task's run ended: its exit code, its stdout and stderr, and whether it was stopped
    for its time limit."""

    code: int
    stdout: bytes
    stderr: bytes
    timed_out: bool


class Children:
    """The children running now in this process, so that an interrupt can stop them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()
        self.stopping = False

    def add(self, child: subprocess.Popen[bytes]) -> None:
        with self._lock:
            if self.stopping:
                _stop_group(child, grace=0)
            self._running.add(child)

    def discard(self, child: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.discard(child)

    def stop_all(self) -> None:
        """Interrupt every child (each thread waiting on one then sees it end)."""
        with self._lock:
            self.stopping = True
            running = list(self._running)
        for child in running:
            _signal_group(child, signal.SIGINT)


Launch = Callable[[list[str], Path, float | None, Children | None], ChildExit]
"""What carries out a task's ``rpc-agent -p`` command line (``argv``, the prompt file for its
stdin, the time limit, the batch's children): :func:`run_child`, a process of its own. Everything
around it (checkout, session path, judging the outcome) is :func:`run_task`'s, whatever runs it."""


def _signal_group(child: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, sig)


def _stop_group(child: subprocess.Popen[bytes], grace: float = STOP_GRACE) -> None:
    """Interrupt the child's group, then kill it if it has not ended within ``grace``."""
    if child.poll() is None:
        _signal_group(child, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=grace)
    _signal_group(child, signal.SIGKILL)  # also what the child itself left running in the group


def child_argv(
    task: BatchTask, options: WorkerOptions, cwd: Path, session: Path, schema: Path | None
) -> list[str]:
    argv = [options.python or sys.executable, "-m", "rpc_agent", "-p", "-", "--output-format", "json"]
    argv += ["--cwd", str(cwd), "--session", str(session)]
    if options.session_dir:
        argv += ["--session-dir", options.session_dir]
    if options.provider:
        argv += ["--provider", options.provider]
    if options.faux_script:
        argv += ["--faux-script", options.faux_script]
    model = task.model or options.model
    if model:
        argv += ["--model", model]
    if task.maxTurns is not None:
        argv += ["--max-turns", str(task.maxTurns)]
    if task.maxBudgetUsd is not None:
        argv += ["--max-budget-usd", repr(task.maxBudgetUsd)]
    if schema is not None:
        argv += ["--output-schema", str(schema)]
    if task.sandbox is not None:
        argv += ["--sandbox", task.sandbox]
    return argv


def _session_path(options: WorkerOptions, cwd: Path) -> Path:
    folder = Path(options.session_dir) if options.session_dir else files.default_session_dir(str(cwd))
    return folder / files.session_file_name(files.now_iso(), files.new_session_id())


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:40] or "task"


def run_task(
    task: BatchTask, options: WorkerOptions, children: Children | None = None, launch: Launch | None = None
) -> ResultLine:
    """Run one task to its result line (never raises for the task's own failures); ``launch``
    carries out its command line (None: :func:`run_child`)."""
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix=f"rpc-agent-batch-{_safe(task.id)}-", dir=options.checkouts_dir))
    kept: Path | None = None
    line: ResultLine = {"id": task.id}
    try:
        if task.repo is not None:
            assert task.ref is not None
            cwd = scratch / _safe(Path(task.repo.rstrip("/")).stem or "repo")
            commit = check_out(task.repo, task.ref, cwd)
            line["commit"] = commit
            kept = scratch if options.keep_checkouts else None
        else:
            assert task.cwd is not None
            cwd = Path(task.cwd)
        schema = None
        if task.outputSchema is not None:
            schema = scratch / "output-schema.json"
            schema.write_bytes(orjson.dumps(task.outputSchema))
        session = _session_path(options, cwd)
        argv = child_argv(task, options, cwd, session, schema)
        prompt = scratch / "prompt.txt"  # the child's stdin: a file, not a pipe kept fed
        prompt.write_bytes(task.prompt.encode())
        timeout = task.timeoutSeconds or options.timeout
        ended = (launch or run_child)(argv, prompt, timeout, children)
        line = {**line, **_judge(ended, timeout)}
        line["sessionFile"] = str(session) if session.is_file() else None
        if kept is not None:
            line["checkout"] = str(cwd)
    except CheckoutError as exc:
        line.update(
            {"status": "failed", "reason": str(exc), "exitCode": None, "result": None, "sessionFile": None}
        )
    except OSError as exc:
        line.update(
            {"status": "failed", "reason": f"cannot start the task: {exc}", "exitCode": None, "result": None}
        )
        line.setdefault("sessionFile", None)
    finally:
        if kept is None:
            shutil.rmtree(scratch, ignore_errors=True)
    line["durationMs"] = int((time.monotonic() - started) * 1000)
    return line


def _spawn(argv: list[str], prompt: Path) -> subprocess.Popen[bytes]:
    """The child, in a process group of its own, with SIGINT deliverable.

    A child inherits the signal mask of the thread that starts it, and a Ray worker runs its
    tasks with SIGINT blocked: the child would never see the interrupt that lets it store what
    it has. So SIGINT is unblocked in this thread while the child is made, then blocked again.
    """
    blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    if blocked:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    try:
        with prompt.open("rb") as stdin:
            return subprocess.Popen(
                argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
            )
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])


def run_child(argv: list[str], prompt: Path, timeout: float | None, children: Children | None) -> ChildExit:
    """The task's run as a child process, stopped (with what it started) at ``timeout``."""
    child = _spawn(argv, prompt)
    if children is not None:
        children.add(child)
    timed_out = False
    deadline = time.monotonic() + timeout if timeout is not None else None
    try:
        while True:
            # In slices: Ray cancels a task by raising KeyboardInterrupt in its worker's Python
            # code, which a wait blocked in the kernel would not see until the child ended.
            left = deadline - time.monotonic() if deadline is not None else WAIT_SLICE
            try:
                stdout, stderr = child.communicate(timeout=max(0.0, min(left, WAIT_SLICE)))
                break
            except subprocess.TimeoutExpired:
                if deadline is not None and time.monotonic() >= deadline:
                    timed_out = True
                    _stop_group(child)
                    stdout, stderr = child.communicate()
                    break
    except BaseException:  # an interrupt of this thread, or a Ray cancellation
        _stop_group(child)
        child.communicate()
        raise
    finally:
        if children is not None:
            children.discard(child)
        _signal_group(child, signal.SIGKILL)  # what the run left behind in its group
    return ChildExit(child.returncode, stdout, stderr, timed_out)


def _judge(ended: ChildExit, timeout: float | None) -> Outcome:
    code = ended.code
    result = _result_of(ended.stdout)
    said = ended.stderr.decode(errors="replace").strip()[-STDERR_TAIL:]
    if ended.timed_out:
        reason: str | None = f"timed out after {timeout:g} s"
    elif code == 0 and result is not None:
        return {"status": "done", "reason": None, "exitCode": 0, "result": result}
    elif result is not None:
        reason = f"{result.get('stopReason')}: {result.get('errorMessage') or 'the run failed'}"
    elif code < 0:
        reason = f"crashed: killed by {_signal_name(-code)}" + (f": {said}" if said else "")
    else:
        reason = f"exited with code {code}" + (f": {said}" if said else " without a result")
    return {"status": "failed", "reason": reason, "exitCode": code, "result": result}


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _result_of(stdout: bytes) -> RunResult | None:
    """The child's result object: its last stdout line, when that is one."""
    for line in reversed(stdout.splitlines()):
        if not line.strip():
            continue
        try:
            value: Any = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
        return cast(RunResult, value) if isinstance(value, dict) and value.get("type") == "result" else None
    return None
