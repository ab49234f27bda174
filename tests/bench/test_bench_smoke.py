"""Smoke test of the session store benchmark: it runs and produces positive numbers.

No timing is asserted (that is what the benchmark itself reports); this only keeps the script
from rotting. It runs on a 200-entry session without the node baseline.
"""

from __future__ import annotations

from pathlib import Path


def test_bench_runs_on_a_small_session(tmp_path: Path) -> None:
    from bench import session_store as bench

    lines: list[str] = []
    argv = ["--sizes", "200", "--no-baseline", "--runs", "2", "--append-runs", "1"]
    argv += ["--sequential", "10", "--tasks", "4", "--per-task", "5", "--data-dir", str(tmp_path)]

    report = bench.main(argv, log=lines.append)

    assert len(report.rows) == 1
    row = report.rows[0]
    assert row.entries == 200
    assert row.lines > 200
    assert row.file_mb > 0
    assert row.open_ms > 0
    assert row.context_ms > 0
    assert row.tree_ms > 0
    assert row.context_messages > 0
    assert row.tree_nodes > 0
    assert row.pi is None
    # Sequential and concurrent, on each event loop the bench measures (asyncio, and uvloop).
    loops = len({a.label.split(", ", 1)[1] for a in report.appends})
    assert loops >= 1
    assert [a.appends for a in report.appends] == [10, 20] * loops
    for result in report.appends:
        assert result.per_second > 0
        assert result.fsyncs > 0
    printed = "\n".join(lines)
    assert "open+load ms" in printed
    assert "appends/s" in printed
