"""Smoke test of the batch benchmark: a small round runs and its counts add up (no timing)."""

from __future__ import annotations

from pathlib import Path


def test_bench_runs_a_small_batch(tmp_path: Path) -> None:
    from bench import batch as bench

    lines: list[str] = []
    (only,) = bench.main(["--tasks", "3", "--workers", "2", "--data-dir", str(tmp_path)], log=lines.append)
    assert (only.workers, only.tasks, only.done, only.failed) == (2, 3, 3, 0)
    assert (only.lock_failures, only.sidecars_left, only.broken_sessions) == (0, 0, 0)
    assert only.per_second > 0
    assert "tasks/s" in lines[1]
