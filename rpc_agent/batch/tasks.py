"""The two files of a batch: the tasks (JSON lines in) and the results (JSON lines out).

A task line is ``{id, prompt, cwd}`` or ``{id, prompt, repo, ref}`` with optional ``model``,
``maxTurns``, ``maxBudgetUsd``, ``timeoutSeconds``, ``outputSchema`` and ``sandbox``. All lines
are checked before anything runs, so a typo in line 900 does not stop a batch halfway.

The results file is appended to, one fsynced line per finished task; its ids are what a rerun
skips. A line cut short by a hard stop (no newline at the end) is dropped when the file is
opened again; any other unreadable line is an error, and the file is left as it is.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Literal, Required, TypedDict, cast

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rpc_agent.protocol.json_schema import JsonSchema
from rpc_agent.protocol.loose import Loose
from rpc_agent.protocol.run_output import RunResult
from rpc_agent.validation import describe


class BatchInputError(Exception):
    """A tasks or results file that cannot be used; the message names the file and line."""


class BatchTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    cwd: str | None = None
    """The folder to work in (relative: to the tasks file's folder)."""
    repo: str | None = None
    """A git repository (a path, relative like ``cwd``, or a URL) to check ``ref`` out of."""
    ref: str | None = None
    model: str | None = None
    maxTurns: int | None = Field(default=None, ge=1)
    maxBudgetUsd: float | None = Field(default=None, gt=0)
    timeoutSeconds: float | None = Field(default=None, gt=0)
    outputSchema: Loose[JsonSchema] | None = None
    sandbox: Literal["off", "read-only", "workspace-write"] | None = None
    """As ``--sandbox`` (checked here, so that a typo stops the batch before it starts)."""

    @model_validator(mode="after")
    def _one_place(self) -> BatchTask:
        if (self.cwd is None) == (self.repo is None):
            raise ValueError("give either cwd or repo (with ref)")
        if self.repo is not None and not self.ref:
            raise ValueError("a task with a repo needs a ref")
        if self.ref is not None and self.repo is None:
            raise ValueError("ref needs a repo")
        return self

    def resolved(self, base: Path) -> BatchTask:
        """Relative paths made absolute against ``base`` (a worker may run anywhere)."""
        changes: dict[str, str] = {}
        if self.cwd is not None:
            changes["cwd"] = str((base / Path(self.cwd).expanduser()).absolute())
        if self.repo is not None and "://" not in self.repo and not _scp_like(self.repo):
            changes["repo"] = str((base / Path(self.repo).expanduser()).absolute())
        return self.model_copy(update=changes)


def _scp_like(repo: str) -> bool:
    """``user@host:path``, git's other way to name a remote repository."""
    head, sep, _rest = repo.partition(":")
    return bool(sep) and "/" not in head and len(head) > 1


def load_tasks(path: Path) -> list[BatchTask]:
    """Every task of the file, relative paths resolved; raises BatchInputError on any bad line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BatchInputError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    base = path.absolute().parent
    tasks: list[BatchTask] = []
    problems: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task = BatchTask.model_validate(orjson.loads(line))
        except orjson.JSONDecodeError as exc:
            problems.append(f"line {number}: not JSON: {exc}")
            continue
        except ValidationError as exc:
            problems.append(f"line {number}: {describe(exc, whole='(task)')}")
            continue
        if task.id in seen:
            problems.append(f"line {number}: the id {task.id!r} is already used by an earlier task")
            continue
        seen.add(task.id)
        tasks.append(task.resolved(base))
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise BatchInputError(f"{path}: {len(problems)} bad task line(s):\n  {shown}{more}")
    return tasks


Status = Literal["done", "failed"]


class Outcome(TypedDict):
    """How a task's child ended: ``result`` is the line it printed last (its ``-p`` JSON result),
    when it printed one."""

    status: Status
    reason: str | None
    exitCode: int | None
    result: RunResult | None


class ResultLine(TypedDict, total=False):
    """One line of the results file: the task's id and ``Outcome``, where its session is, how
    long it took. A line from an older version may lack or add fields, so readers use ``get``;
    every line this version writes has all but ``commit`` (a repo task's) and ``checkout`` (a
    kept checkout)."""

    id: Required[str]
    status: Status
    reason: str | None
    exitCode: int | None
    result: RunResult | None
    sessionFile: str | None
    durationMs: int | None
    commit: str
    checkout: str


def read_results(path: Path) -> dict[str, ResultLine]:
    """The last result of each task id in an existing results file (none: no file yet).

    A last line without its newline was cut short by a hard stop: it is cut off the file, so
    that the next line appended starts clean.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise BatchInputError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        os.truncate(path, keep)
        data = data[:keep]
    results: dict[str, ResultLine] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            result = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise BatchInputError(f"{path}: line {number} is not a result line: {exc}") from None
        if not isinstance(result, dict) or not isinstance(result.get("id"), str):
            raise BatchInputError(f"{path}: line {number} is not a result line (no string id)")
        results[result["id"]] = cast(ResultLine, result)
    return results


class ResultsFile:
    """The results file open for appending: each line written whole, then fsynced.

    One batch writes it at a time: it is locked (``flock``) from before it is read until the
    batch ends, so a second batch on the same file is refused instead of running the same
    tasks again and interleaving its lines."""

    def __init__(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise BatchInputError(f"{path}: cannot open it: {exc.strerror or exc}") from None
        self.path = path
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise BatchInputError(f"{path}: another rpc-agent batch is writing it") from None

    def append(self, result: ResultLine) -> None:
        line = orjson.dumps(result, option=orjson.OPT_APPEND_NEWLINE)
        written = 0
        while written < len(line):
            written += os.write(self._fd, line[written:])
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
