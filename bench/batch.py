"""How many concurrent headless runs one sessions folder takes: ``rpc-agent batch`` timed.

Each round runs the same faux tasks (a ``read`` tool call, then an answer: five entries per
session) through ``rpc-agent batch --jobs N`` as a process of its own, every task's session in
one shared ``--session-dir``, and reports the throughput and what concurrency cost the store:
tasks that failed on a session lock (the lock never waits: a conflict is an immediate failure,
so it is counted, not timed), lock sidecars left behind, and session files that do not read
back whole.

    python -m bench.batch                      # 100 tasks, 2, 4, 8 and 16 workers
    python -m bench.batch --tasks 20 --workers 2 4
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

JsonDict = dict[str, Any]


@dataclass(slots=True)
class Round:
    workers: int
    tasks: int
    seconds: float
    done: int
    failed: int
    lock_failures: int
    sidecars_left: int
    broken_sessions: int

    @property
    def per_second(self) -> float:
        return self.tasks / self.seconds if self.seconds > 0 else 0.0


def _setup(root: Path, tasks: int) -> tuple[Path, Path]:
    work = root / "work"
    work.mkdir()
    (work / "notes.txt").write_text("".join(f"line {n}\n" for n in range(200)))
    script = root / "script.json"
    script.write_text(
        json.dumps(
            [{"toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}]}, {"text": "Read it."}]
        )
    )
    tasks_file = root / "tasks.jsonl"
    tasks_file.write_text(
        "".join(
            json.dumps({"id": f"t{n:04d}", "prompt": f"read the notes ({n})", "cwd": "work"}) + "\n"
            for n in range(tasks)
        )
    )
    return tasks_file, script


def _broken(session: Path) -> bool:
    try:
        lines = session.read_bytes().splitlines()
        entries = [json.loads(line) for line in lines]
    except (OSError, ValueError):
        return True
    return not entries or entries[0].get("type") != "session"


def run_round(root: Path, tasks_file: Path, script: Path, workers: int) -> Round:
    sessions = root / f"sessions-{workers}"
    results = root / f"results-{workers}.jsonl"
    argv = [sys.executable, "-m", "rpc_agent", "batch", str(tasks_file), "-o", str(results)]
    argv += ["--jobs", str(workers), "--provider", "faux", "--faux-script", str(script)]
    argv += ["--session-dir", str(sessions)]
    env = {**os.environ, "RPC_AGENT_HOME": str(root / "home")}
    started = time.perf_counter()
    subprocess.run(argv, env=env, stderr=subprocess.DEVNULL, check=False)
    seconds = time.perf_counter() - started
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    failed = [line for line in lines if line["status"] != "done"]
    return Round(
        workers=workers,
        tasks=len(lines),
        seconds=seconds,
        done=len(lines) - len(failed),
        failed=len(failed),
        lock_failures=sum("lock" in str(line.get("reason")) for line in failed),
        sidecars_left=len(list(sessions.glob("*.lock"))),
        broken_sessions=sum(_broken(path) for path in sessions.glob("*.jsonl")),
    )


def main(argv: Sequence[str] | None = None, log: Callable[[str], None] = print) -> list[Round]:
    parser = argparse.ArgumentParser(prog="python -m bench.batch", description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--data-dir", type=Path, help="where to work (default: a temporary folder)")
    args = parser.parse_args(argv)
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory(dir=args.data_dir) as folder:
        root = Path(folder)
        tasks_file, script = _setup(root, args.tasks)
        log(f"{args.tasks} faux tasks per round, one sessions folder, {os.cpu_count()} CPU(s)")
        log("workers  tasks  seconds  tasks/s  done  failed  lock failures  .lock left  broken sessions")
        for workers in args.workers:
            r = run_round(root, tasks_file, script, workers)
            rounds.append(r)
            log(
                f"{r.workers:>7}  {r.tasks:>5}  {r.seconds:>7.1f}  {r.per_second:>7.2f}  {r.done:>4}  "
                f"{r.failed:>6}  {r.lock_failures:>13}  {r.sidecars_left:>10}  {r.broken_sessions:>15}"
            )
    return rounds


if __name__ == "__main__":
    main()
