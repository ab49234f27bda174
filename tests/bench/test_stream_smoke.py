"""Smoke test of ``bench.stream`` with tiny counts: it runs every row with checkpoints on and
off (``--no-checkpoints``) in one run, ``write`` calls included (no timing is asserted).

Each server of the bench imports the anthropic SDK, the most of a server's start, so the smoke
run measures the command's tuning on only; ``--tuning`` picks the settings as in the other
benches (``bench.tuning.tunings``, whose ``both`` the tree_speed smoke runs)."""

from __future__ import annotations

import pytest


def test_stream_bench_prints_rows_with_checkpoints_on_and_off(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import stream

    argv = ["--small", "2", "--large", "4", "--tools", "2", "--runs", "1", "--tuning", "on"]
    assert stream.main(argv) == 0
    printed = capsys.readouterr().out
    for checkpoints in ("on", "off"):
        assert f"tuning on, checkpoints {checkpoints}:" in printed
    assert "tuning off" not in printed
    assert printed.count("ms per write call") == 2
    assert printed.count("ms per tool call") == 2


def test_stream_bench_measures_both_tunings_unless_told() -> None:
    from bench import options, stream

    assert options.parse_counts(None, [], tuning=True).tuning == "both"
    assert stream.measured_settings("both") == [(True, True), (True, False), (False, True), (False, False)]
    assert stream.measured_settings("off") == [(False, True), (False, False)]
