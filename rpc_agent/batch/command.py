"""``rpc-agent batch TASKS.jsonl -o RESULTS.jsonl``: the command line of a batch.

Exit codes: 0 every task done; 1 some task failed; 2 bad usage (flags, a bad task line, an
unreadable results file); 130 interrupted (the results file holds what finished before).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Generator, Sequence
from pathlib import Path

from rpc_agent.agent.structured import check_output_schema
from rpc_agent.argtypes import positive_float, positive_int
from rpc_agent.batch.progress import Progress
from rpc_agent.batch.tasks import (
    BatchInputError,
    BatchTask,
    ResultLine,
    ResultsFile,
    load_tasks,
    read_results,
)
from rpc_agent.batch.worker import Launch, WorkerOptions
from rpc_agent.errors import InvalidRequestError

EPILOG = """\
a task line (JSON):
  {"id": "fix-1", "prompt": "fix the failing test", "cwd": "projects/a"}
  {"id": "bump-7", "prompt": "bump the version", "repo": "/srv/git/b.git", "ref": "main",
   "model": "...", "maxTurns": 20, "maxBudgetUsd": 0.5, "timeoutSeconds": 600,
   "outputSchema": {...}, "sandbox": "..."}
a result line: {"id", "status": "done"|"failed", "reason", "exitCode", "result" (the -p JSON
result), "sessionFile", "durationMs"} (+ "commit" of a repo task, "checkout" when kept)

a rerun skips the tasks that have a result (--retry-failed: runs the failed ones again);
Ctrl-C stops the children and leaves the results file valid.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rpc-agent batch",
        description="Run many headless prompts (one `rpc-agent -p` process each), locally or on Ray; "
        "one result line per task, appended as tasks finish.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("tasks", type=Path, metavar="TASKS.jsonl", help="one task per line")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="RESULTS.jsonl")
    parser.add_argument(
        "--jobs",
        type=positive_int,
        metavar="N",
        help="tasks at once (default 4; with --ray: the cluster's CPUs)",
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run each task as a Ray task: on a new local instance, or on the cluster at ADDRESS "
        "('auto', 'ray://head:10001'); needs the ray extra: pip install 'rpc-agent[ray]'",
    )
    parser.add_argument("--provider", choices=["anthropic", "faux"], help="as for rpc-agent")
    parser.add_argument("--faux-script", type=Path, metavar="FILE", help="as for rpc-agent")
    parser.add_argument(
        "--session-dir",
        type=Path,
        help="folder for every task's session file (on a cluster: storage every node sees)",
    )
    parser.add_argument("--model", help="model of the tasks that name none")
    parser.add_argument(
        "--timeout",
        type=positive_float,
        metavar="SECONDS",
        help="time limit of a task without timeoutSeconds",
    )
    parser.add_argument("--retry-failed", action="store_true", help="run again the tasks whose result failed")
    parser.add_argument(
        "--keep-checkouts",
        action="store_true",
        help="keep the folder of each repo task (its path is in the result)",
    )
    parser.add_argument(
        "--checkouts-dir",
        type=Path,
        metavar="DIR",
        help="where repo tasks are checked out (default: a temp folder)",
    )
    return parser


def _absolute(path: Path | None) -> str | None:
    return str(path.expanduser().absolute()) if path is not None else None


def _check_schemas(tasks: list[BatchTask]) -> None:
    for task in tasks:
        if task.outputSchema is not None:
            try:
                check_output_schema(task.outputSchema)
            except InvalidRequestError as exc:
                raise BatchInputError(f"task {task.id!r}: {exc}") from None


def main(argv: Sequence[str], *, launch: Launch | None = None) -> int:
    """The batch command; ``launch`` carries out each local task's command line (None: a child
    process, see :data:`rpc_agent.batch.worker.Launch`)."""
    args = build_parser().parse_args(argv)
    if args.ray is not None:
        try:
            import ray  # noqa: F401  (checked here, used by the runner)
        except ImportError:
            print("rpc-agent batch: --ray needs Ray: pip install 'rpc-agent[ray]'", file=sys.stderr)
            return 2
    output: ResultsFile | None = None
    try:
        tasks = load_tasks(args.tasks)
        _check_schemas(tasks)
        output = ResultsFile(args.output)
        previous = read_results(args.output)
    except BatchInputError as exc:
        if output is not None:
            output.close()
        print(f"rpc-agent batch: {exc}", file=sys.stderr)
        return 2
    finished = {i for i, r in previous.items() if r.get("status") == "done" or not args.retry_failed}
    todo = [task for task in tasks if task.id not in finished]
    if args.checkouts_dir is not None:
        args.checkouts_dir.mkdir(parents=True, exist_ok=True)
    options = WorkerOptions(
        provider=args.provider,
        faux_script=_absolute(args.faux_script),
        session_dir=_absolute(args.session_dir),
        model=args.model,
        timeout=args.timeout,
        checkouts_dir=_absolute(args.checkouts_dir),
        keep_checkouts=args.keep_checkouts,
    )
    jobs = args.jobs or (None if args.ray is not None else 4)
    progress = Progress(len(todo), jobs, sys.stderr, skipped=len(tasks) - len(todo))
    return _run(args, todo, options, jobs, progress, output, launch)


def _run(
    args: argparse.Namespace,
    todo: list[BatchTask],
    options: WorkerOptions,
    jobs: int | None,
    progress: Progress,
    output: ResultsFile,
    launch: Launch | None,
) -> int:
    started = time.monotonic()
    interrupted = False
    try:
        progress.start()
        with contextlib.closing(_results(args, todo, options, jobs, progress, launch)) as results:
            for line in results:
                output.append(line)
                progress.add(line)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        output.close()
    progress.summary(time.monotonic() - started, interrupted=interrupted)
    if interrupted:
        return 130
    return 1 if progress.failed else 0


def _results(
    args: argparse.Namespace,
    todo: list[BatchTask],
    options: WorkerOptions,
    jobs: int | None,
    progress: Progress,
    launch: Launch | None,
) -> Generator[ResultLine]:
    from rpc_agent.batch.runners import run_local, run_on_ray

    if not todo:
        return
    if args.ray is not None:
        yield from run_on_ray(todo, options, args.ray or None, jobs, progress.set_window)
    else:
        yield from run_local(todo, options, jobs or 4, launch)
