"""Smoke test of the sandbox benchmark: it runs and prints a positive time for each row.

No timing is asserted; this keeps the script from rotting.
"""

from __future__ import annotations


def test_the_sandbox_bench_runs() -> None:
    from bench import sandbox as bench

    lines: list[str] = []
    rows = bench.main(["--runs", "2"], log=lines.append)
    labels = [row.label for row in rows]
    assert labels[:2] == ["spawn: off", "spawn: off (fork+exec)"]
    assert "tool: off" in labels
    assert all(row.median_ms > 0 and row.ratio is not None and row.ratio > 0 for row in rows)
    assert "x off" in "\n".join(lines)
