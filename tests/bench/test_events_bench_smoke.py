"""Smoke test of ``bench.events`` with tiny counts: every row is printed with its five columns
(no timing is asserted)."""

from __future__ import annotations

import pytest


def test_events_bench_prints_each_event_built_three_ways(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import events

    assert events.main(["--count", "3", "--repeats", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "us per event, best of 2 rounds of 3:"
    assert lines[1].split() == [
        "event",
        "builder",
        "unchecked",
        "validated",
        "builder+sent",
        "validated+sent",
    ]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    assert set(rows) == {"message_update", "message_end", "tool_execution_end"}
    for figures in rows.values():
        assert len(figures) == 5
        assert all(float(figure) > 0 for figure in figures)
