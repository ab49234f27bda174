"""What the batch tests share: a tasks file, the command run in the test's process, and the
results read back.

A task's ``rpc-agent -p`` command line is a real child process where the process is the point
(a crash, a timeout, an interrupt, a run on Ray); elsewhere (:meth:`Batch.run_in_process`) the
same command line runs through the real ``cli.main`` in the batch's worker thread, with the
prompt file as its stdin and its stdout and stderr kept for the batch to judge, as a child's are.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rpc_agent import cli
from rpc_agent.batch import command
from rpc_agent.batch.worker import ChildExit, Children

JsonDict = dict[str, Any]

MARKER_COMMAND = (
    "if [ -e crash-here ]; then kill -9 $PPID; fi; "
    "if [ -e hang-here ]; then sleep {sleep}; fi; echo worked > out.txt"
)
"""A bash call every scripted task makes: its folder decides whether the run crashes (the
agent killed under it), hangs, or works."""


def script(sleep: str = "31.4159") -> list[JsonDict]:
    call = {"name": "bash", "arguments": {"command": MARKER_COMMAND.format(sleep=sleep)}}
    return [{"toolCalls": [call]}, {"text": "finished"}]


@dataclass
class Batch:
    root: Path

    @property
    def tasks_file(self) -> Path:
        return self.root / "tasks.jsonl"

    @property
    def results_file(self) -> Path:
        return self.root / "results.jsonl"

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    def folder(self, name: str, marker: str | None = None) -> Path:
        path = self.root / name
        path.mkdir(exist_ok=True)
        if marker is not None:
            (path / marker).write_text("")
        return path

    def write_tasks(self, tasks: list[JsonDict]) -> None:
        self.tasks_file.write_text("".join(json.dumps(task) + "\n" for task in tasks))

    def script_file(self, replies: list[JsonDict]) -> Path:
        path = self.root / "script.json"
        path.write_text(json.dumps(replies))
        return path

    def argv(self, *extra: str, replies: list[JsonDict] | None = None) -> list[str]:
        argv = ["batch", str(self.tasks_file), "-o", str(self.results_file), "--provider", "faux"]
        argv += ["--session-dir", str(self.sessions)]
        if replies is not None:
            argv += ["--faux-script", str(self.script_file(replies))]
        return [*argv, *extra]

    def run(self, *extra: str, replies: list[JsonDict] | None = None) -> tuple[int, str]:
        """``rpc-agent batch`` in this process: its exit code and its stderr."""
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            code = cli.main(self.argv(*extra, replies=replies))
        return code, stderr.getvalue()

    def run_in_process(self, *extra: str, replies: list[JsonDict] | None = None) -> tuple[int, str]:
        """``rpc-agent batch`` in this process, each task's run too (:func:`run_in_thread`)."""
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), _per_thread_stdio():
            code = command.main(self.argv(*extra, replies=replies)[1:], launch=run_in_thread)
        return code, stderr.getvalue()

    def results(self) -> list[JsonDict]:
        return [json.loads(line) for line in self.results_file.read_text().splitlines()]

    def by_id(self) -> dict[str, JsonDict]:
        return {result["id"]: result for result in self.results()}


def session_header(path: str) -> JsonDict:
    header = json.loads(Path(path).read_text().splitlines()[0])
    assert isinstance(header, dict)
    return header


class _ThreadStream:
    """Stands for ``sys.stdin``/``stdout``/``stderr``: a thread that set its own stream uses it,
    every other thread the stream that was there before."""

    def __init__(self, default: TextIO) -> None:
        self.default = default
        self.local = threading.local()

    def __getattr__(self, name: str) -> Any:
        return getattr(getattr(self.local, "stream", self.default), name)


_STDIO = ("stdin", "stdout", "stderr")


@contextlib.contextmanager
def _per_thread_stdio() -> Iterator[None]:
    saved = {name: getattr(sys, name) for name in _STDIO}
    for name, stream in saved.items():
        setattr(sys, name, _ThreadStream(stream))
    try:
        yield
    finally:
        for name, stream in saved.items():
            setattr(sys, name, stream)


def run_in_thread(
    argv: list[str], prompt: Path, timeout: float | None, children: Children | None
) -> ChildExit:
    """A task's ``python -m rpc_agent -p ...`` run by ``cli.main`` in this thread: the prompt
    file is its stdin, its stdout and stderr are kept (under :func:`_per_thread_stdio`)."""
    assert argv[1:3] == ["-m", "rpc_agent"], argv
    assert timeout is None, "a time limit needs a real child (run the batch with Batch.run)"
    cwd = Path(argv[argv.index("--cwd") + 1])
    assert not (cwd / "crash-here").exists(), "the crash kills its parent: run the batch with Batch.run"
    streams: dict[str, _ThreadStream] = {}
    for name in _STDIO:
        stream = getattr(sys, name)
        assert isinstance(stream, _ThreadStream), "run the batch with Batch.run_in_process"
        streams[name] = stream
    out, err = io.BytesIO(), io.BytesIO()
    with prompt.open(encoding="utf-8") as stdin:
        mine: dict[str, Any] = {
            "stdin": stdin,
            "stdout": io.TextIOWrapper(out, encoding="utf-8", write_through=True),
            "stderr": io.TextIOWrapper(err, encoding="utf-8", write_through=True),
        }
        for name, stream in streams.items():
            stream.local.stream = mine[name]
        try:
            code = cli.main(argv[3:])
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 2
        finally:
            for stream in streams.values():
                del stream.local.stream
            for name in ("stdout", "stderr"):
                mine[name].flush()
    return ChildExit(code, out.getvalue(), err.getvalue(), timed_out=False)
