"""What the batch tests share: a tasks file, the command run in the test's process (its
children are real ``rpc-agent -p`` processes), and the results read back."""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rpc_agent import cli

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

    def results(self) -> list[JsonDict]:
        return [json.loads(line) for line in self.results_file.read_text().splitlines()]

    def by_id(self) -> dict[str, JsonDict]:
        return {result["id"]: result for result in self.results()}


def session_header(path: str) -> JsonDict:
    header = json.loads(Path(path).read_text().splitlines()[0])
    assert isinstance(header, dict)
    return header
