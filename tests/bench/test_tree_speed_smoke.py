"""Smoke test of bench/tree_speed.py: the one table comes out with its seven rows.

No timing is asserted; ``--quick`` runs two small sessions without the node baseline.
"""

from __future__ import annotations

from pathlib import Path


def test_tree_speed_prints_one_table_of_seven_rows(tmp_path: Path) -> None:
    from bench import tree_speed as module

    lines: list[str] = []

    report = module.main(["--quick", "--data-dir", str(tmp_path)], log=lines.append)

    rows = [line for line in report.splitlines() if line.startswith("| ") and line[2:3].isdigit()]
    assert [row[2] for row in rows] == list("1234567")
    assert "100 entries" in report
    assert "300 entries" in report
    assert "NOT the same" not in report
