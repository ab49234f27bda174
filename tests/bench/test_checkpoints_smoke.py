"""Smoke test of the checkpoints benchmark on a tiny tree: it runs, restores what it changed,
and reports positive times (no timing is asserted; the benchmark prints them)."""

from __future__ import annotations


def test_bench_runs_on_a_tiny_tree() -> None:
    from bench import checkpoints as bench

    lines: list[str] = []
    argv = [
        "--files",
        "60",
        "--file-kb",
        "1",
        "--changed",
        "5",
        "--runs",
        "2",
        "--turns",
        "2",
        "--turn-ms",
        "10",
        # Every session is a fresh server process: one of each kind still fills every row.
        "--session-runs",
        "1",
    ]
    report = bench.main(argv, log=lines.append)

    assert report.files == 60
    assert report.restored_files == 5
    for value in (report.git_status_ms, report.unchanged_ms, report.changed_ms, report.restore_ms):
        assert value > 0
    assert set(report.sessions) == {"on", "off", "on paced", "off paced"}
    assert all(seconds > 0 for seconds in report.sessions.values())
    printed = "\n".join(lines)
    assert "x git status" in printed
    assert "2-turn session" in printed
