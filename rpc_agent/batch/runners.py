"""Where a batch's tasks run: a bounded pool of local threads, or Ray tasks.

Both yield result lines as tasks finish, and both stop cleanly when the consumer stops them
(``close()`` on the generator, which an interrupt of the batch does): nothing new starts, and
every running child is interrupted and waited for, so no process outlives the batch. A task
whose worker itself failed (a bug, a Ray worker or node lost) is a failed result too.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from rpc_agent.batch.tasks import BatchTask, ResultLine
from rpc_agent.batch.worker import STOP_GRACE, Children, Launch, WorkerOptions, run_task

RAY_POLL = 0.5
"""Seconds between checks of the Ray tasks in flight (so that an interrupt is seen soon)."""


def _worker_failed(task: BatchTask, exc: BaseException) -> ResultLine:
    return {
        "id": task.id,
        "status": "failed",
        "reason": f"the worker failed: {type(exc).__name__}: {exc}",
        "exitCode": None,
        "result": None,
        "sessionFile": None,
        "durationMs": None,
    }


def run_local(
    tasks: list[BatchTask], options: WorkerOptions, jobs: int, launch: Launch | None = None
) -> Iterator[ResultLine]:
    """Each task in one of ``jobs`` threads, each thread waiting on its child process (or on
    ``launch``, which carries out the task's command line in its stead)."""
    children = Children()
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="rpc-agent-batch")
    running: dict[Future[ResultLine], BatchTask] = {}
    try:
        running = {pool.submit(run_task, task, options, children, launch): task for task in tasks}
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                task = running.pop(future)
                error = future.exception()
                yield _worker_failed(task, error) if error is not None else future.result()
    finally:
        children.stop_all()
        pool.shutdown(wait=True, cancel_futures=True)


def run_on_ray(
    tasks: list[BatchTask],
    options: WorkerOptions,
    address: str | None,
    jobs: int | None,
    on_window: Callable[[int], None] = lambda _n: None,
) -> Iterator[ResultLine]:
    """Each task as a Ray task (one CPU each), at most ``jobs`` in flight (default: the
    cluster's CPUs, told to ``on_window`` once known). Joins a Ray already initialized in this
    process, else connects to ``address`` (None: starts a local instance, or joins the one
    RAY_ADDRESS names) and shuts it down at the end."""
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING)
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(run_task)
        window = jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call]
        on_window(window)
        queue = iter(tasks)
        in_flight: dict[Any, BatchTask] = {}
        try:
            while True:
                while len(in_flight) < window and (task := next(queue, None)) is not None:
                    in_flight[remote.remote(task, options)] = task
                if not in_flight:
                    break
                ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=RAY_POLL)
                for ref in ready:
                    task = in_flight.pop(ref)
                    try:
                        yield ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        yield _worker_failed(task, exc)
        finally:
            _cancel(ray, list(in_flight))
    finally:
        if started_here:
            ray.shutdown()


def _cancel(ray: Any, refs: list[Any]) -> None:
    """Cancel the tasks in flight: each running one gets a KeyboardInterrupt, on which its
    worker stops its child; wait for that before the workers may go."""
    if not refs:
        return
    for ref in refs:
        with contextlib.suppress(Exception):
            ray.cancel(ref)
    with contextlib.suppress(Exception):
        ray.wait(refs, num_returns=len(refs), timeout=STOP_GRACE + 2)
