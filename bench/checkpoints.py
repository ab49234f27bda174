"""Workspace checkpoints on a generated working directory (10,000 files of 10 KB by default).

    .venv/bin/python -m bench.checkpoints [--files 10000] [--file-kb 10] [--changed 100] [--runs 7]
                                           [--turns 20] [--turn-ms 300] [--session-runs 3]

Rows, all measured in this run on the same tree:

* ``git status`` of the tree as an ordinary repository (the baseline), and a checkpoint with
  nothing changed (rpc-agent's snapshot: ``git status`` in the shadow repository, then, for
  what changed, one ``fast-import`` and one ``read-tree -m``): ratio;
* a checkpoint after ``--changed`` files changed;
* a restore of ``--changed`` files (a fresh checkpoint first, the writes, a checkpoint after);
* a ``--turns``-turn scripted session (``rpc-agent --provider faux`` over pipes; every turn a
  ``bash`` call changing one file) with checkpoints on and off (``--no-checkpoints``): ratio.
  The faux model answers at once; ``--turn-ms`` adds a pause per turn standing for the model's
  time (a real model takes seconds), during which snapshots go on in the background. Both the
  instant and the paced runs are printed, each the median of ``--session-runs`` sessions (every
  session is a fresh ``rpc-agent`` process: the smoke test runs one of each).
* with pygit2 installed (not a dependency), its ``index.add_all`` + ``write_tree`` on the
  same tree, for the choice of engine.

Medians of ``--runs`` runs.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.options import parse_counts
from rpc_agent.checkpoints import CheckpointMap, Limits, SessionCheckpoints, WorkspaceStore

GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
    "HOME": "/nonexistent",
}


@dataclass
class Report:
    files: int
    megabytes: float
    first_checkpoint_ms: float = 0.0
    git_status_ms: float = 0.0
    unchanged_ms: float = 0.0
    changed_ms: float = 0.0
    restore_ms: float = 0.0
    restored_files: int = 0
    sessions: dict[str, float] = field(default_factory=dict)
    pygit2_unchanged_ms: float | None = None

    @property
    def unchanged_ratio(self) -> float:
        return self.unchanged_ms / self.git_status_ms

    def session_ratio(self, paced: bool) -> float:
        suffix = " paced" if paced else ""
        return self.sessions["on" + suffix] / self.sessions["off" + suffix]


def make_tree(root: Path, files: int, kb: int) -> float:
    """``files`` files of ``kb`` KB of pseudo-random text in 100-file folders; returns MB."""
    total = 0
    block = os.urandom(kb * 512).hex().encode()
    for i in range(files):
        folder = root / f"dir{i // 100:03d}"
        folder.mkdir(exist_ok=True)
        data = f"file {i}\n".encode() + block[: kb * 1024 - 16]
        (folder / f"file{i:05d}.txt").write_bytes(data)
        total += len(data)
    (root / ".gitignore").write_text("*.log\n")
    return total / 1e6


def median_ms(action: Callable[[], object], runs: int, before: Callable[[int], None] | None = None) -> float:
    times: list[float] = []
    for run in range(runs):
        if before is not None:
            before(run)
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def change(root: Path, files: int, count: int, tag: str) -> None:
    step = max(files // count, 1)
    for i in range(0, step * count, step):
        path = root / f"dir{i // 100:03d}" / f"file{i:05d}.txt"
        with open(path, "ab") as f:
            f.write(f"{tag}\n".encode())


def session_seconds(root: Path, home: Path, turns: int, turn_ms: int, checkpoints: bool) -> float:
    """One prompt of ``turns`` bash turns through ``rpc-agent --provider faux`` over pipes (a
    session file of its own, fsynced as usual); the faux model pauses ``turn_ms`` per turn."""
    script: list[dict[str, Any]] = []
    for turn in range(turns):
        command = f"echo {turn} >> dir000/file{turn:05d}.txt"
        script.append(
            {"toolCalls": [{"name": "bash", "arguments": {"command": command}}], "delayMs": turn_ms}
        )
    script.append({"text": "done", "delayMs": turn_ms})  # one word: one pause
    script_file = home / "script.json"
    script_file.write_text(json.dumps(script))
    argv = [sys.executable, "-m", "rpc_agent", "--provider", "faux", "--faux-script", str(script_file)]
    argv += ["--cwd", str(root)] + ([] if checkpoints else ["--no-checkpoints"])
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "get_state"},
        {"jsonrpc": "2.0", "id": 2, "method": "prompt", "params": {"message": "go", "maxTurns": turns + 5}},
    ]
    env = {**os.environ, "RPC_AGENT_HOME": str(home)}
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=root)
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write((json.dumps(requests[0]) + "\n").encode())
    proc.stdin.flush()
    while json.loads(proc.stdout.readline()).get("id") != 1:
        pass
    started = time.perf_counter()
    proc.stdin.write((json.dumps(requests[1]) + "\n").encode())
    proc.stdin.flush()
    while True:
        message = json.loads(proc.stdout.readline())
        if message.get("id") == 2:
            assert "result" in message, message
            break
    elapsed = time.perf_counter() - started
    proc.stdin.close()
    proc.wait()
    proc.stdout.close()
    return elapsed


def pygit2_unchanged(root: Path, scratch: Path, runs: int) -> float | None:
    try:
        pygit2: Any = importlib.import_module("pygit2")
    except ImportError:
        return None
    repo = pygit2.init_repository(str(scratch / "pygit2"), bare=True)
    repo.workdir = str(root)
    index = repo.index
    index.add_all()
    index.write()
    index.write_tree()

    def snapshot() -> None:
        index.add_all()
        index.write()
        index.write_tree()

    return median_ms(snapshot, runs)


def main(argv: list[str] | None = None, log: Callable[[str], None] = print) -> Report:
    args = parse_counts(
        __doc__, argv, files=10_000, file_kb=10, changed=100, runs=7, turns=20, turn_ms=300, session_runs=3
    )
    scratch = Path(tempfile.mkdtemp(prefix="bench-checkpoints-"))
    try:
        root = scratch / "work"
        root.mkdir()
        report = Report(args.files, make_tree(root, args.files, args.file_kb))
        log(f"tree: {report.files} files, {report.megabytes:.0f} MB in {root}")

        plain = scratch / "plain"  # the same tree as an ordinary repository, for git status
        shutil.copytree(root, plain, symlinks=True)
        git = {**GIT_ENV}
        subprocess.run(["git", "init", "-q"], cwd=plain, env=git, check=True)
        subprocess.run(["git", "add", "-A"], cwd=plain, env=git, check=True)
        subprocess.run(["git", "commit", "-qm", "tree"], cwd=plain, env=git, check=True)
        status = ["git", "status", "--porcelain"]
        subprocess.run(status, cwd=plain, env=git, check=True, capture_output=True)
        report.git_status_ms = median_ms(
            lambda: subprocess.run(status, cwd=plain, env=git, check=True, capture_output=True), args.runs
        )

        home = scratch / "home"
        store = WorkspaceStore(home, root)
        mapping = CheckpointMap(None)
        engine = SessionCheckpoints(store, mapping, "bench", exclude=[home], limits=Limits())
        ids = iter(range(1_000_000))
        started = time.perf_counter()
        first, _ = engine.take(f"e{next(ids)}", None)
        report.first_checkpoint_ms = (time.perf_counter() - started) * 1000
        report.unchanged_ms = median_ms(lambda: engine.take(f"e{next(ids)}", None), args.runs)
        report.changed_ms = median_ms(
            lambda: engine.take(f"e{next(ids)}", None),
            args.runs,
            before=lambda run: change(root, args.files, args.changed, f"change {run}"),
        )
        targets: list[str] = []

        def prepare_restore(run: int) -> None:
            snap, _ = engine.take(f"e{next(ids)}", None)
            targets.append(snap.tree)
            change(root, args.files, args.changed, f"restore {run}")
            engine.take(f"e{next(ids)}", None)

        restored: list[int] = []
        report.restore_ms = median_ms(
            lambda: restored.append(len(engine.restore(targets[-1]).changes)),
            args.runs,
            before=prepare_restore,
        )
        report.restored_files = restored[-1]
        assert first.tree

        report.pygit2_unchanged_ms = pygit2_unchanged(root, scratch, args.runs)

        session_home = scratch / "session-home"
        session_home.mkdir()
        session_seconds(root, session_home, 1, 0, True)  # the folder's first snapshot, not timed
        for paced in (False, True):
            turn_ms = args.turn_ms if paced else 0
            suffix = " paced" if paced else ""
            for label, on in (("off", False), ("on", True)):
                runs = [
                    session_seconds(root, session_home, args.turns, turn_ms, on)
                    for _ in range(args.session_runs)
                ]
                report.sessions[label + suffix] = statistics.median(runs)
        print_report(report, args.turns, args.turn_ms, log)
        return report
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def print_report(report: Report, turns: int, turn_ms: int, log: Callable[[str], None]) -> None:
    log(f"first checkpoint (every file hashed):   {report.first_checkpoint_ms:8.1f} ms")
    log(f"git status --porcelain (baseline):      {report.git_status_ms:8.1f} ms")
    log(
        f"checkpoint, nothing changed:            {report.unchanged_ms:8.1f} ms"
        f"  ({report.unchanged_ratio:.2f} x git status)"
    )
    if report.pygit2_unchanged_ms is not None:
        log(f"pygit2 add_all+write_tree, unchanged:   {report.pygit2_unchanged_ms:8.1f} ms")
    log(f"checkpoint, 100 files changed:          {report.changed_ms:8.1f} ms")
    log(f"restore of {report.restored_files} files:                  {report.restore_ms:8.1f} ms")
    for paced in (False, True):
        name = f"{turns}-turn session, {turn_ms if paced else 0} ms/turn model:"
        suffix = " paced" if paced else ""
        log(
            f"{name:40}{report.sessions['off' + suffix]:8.2f} s off, {report.sessions['on' + suffix]:.2f} s on"
            f"  (+{(report.session_ratio(paced) - 1) * 100:.0f}%)"
        )


if __name__ == "__main__":
    main()
