"""Smoke test of ``bench.stream`` with tiny counts: it runs every row with checkpoints on and
off (``--no-checkpoints``) in one run, ``write`` calls included (no timing is asserted)."""

from __future__ import annotations

import pytest


def test_stream_bench_prints_rows_with_checkpoints_on_and_off(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import stream

    assert stream.main(["--small", "2", "--large", "4", "--tools", "2", "--runs", "1"]) == 0
    printed = capsys.readouterr().out
    for tuning in ("on", "off"):
        for checkpoints in ("on", "off"):
            assert f"tuning {tuning}, checkpoints {checkpoints}:" in printed
    assert printed.count("ms per write call") == 4
    assert printed.count("ms per tool call") == 4
