"""The batch's progress on stderr: a redrawn bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import io
from typing import Any

from rpc_agent.batch.progress import Progress
from rpc_agent.batch.tasks import ResultLine, Status


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def line(task_id: str, status: Status, tokens: int, cost: float) -> ResultLine:
    result: Any = {"usage": {"totalTokens": tokens}, "costUsd": cost}  # the fields progress reads
    return {
        "id": task_id,
        "status": status,
        "reason": "timed out after 1 s",
        "result": result,
        "durationMs": 1500,
    }


def test_on_a_terminal_one_line_is_redrawn_with_the_counts_so_far() -> None:
    stream = Terminal()
    progress = Progress(4, 2, stream, skipped=1)
    progress.start()
    progress.add(line("a", "done", 1200, 0.01))
    progress.add(line("b", "failed", 300, 0.005))
    drawn = stream.getvalue().split("\r\x1b[K")
    assert drawn[-1] == "[############------------] 2/4: 1 done, 2 running, 1 failed, 1,500 tokens, $0.0150"
    assert "\n" not in drawn[-1]
    progress.summary(3.0)
    assert stream.getvalue().endswith(
        "\nrpc-agent batch: finished in 3.0 s, 0.67 tasks/s: 1 done, 1 failed, 2 not run, 1 skipped; "
        "1,500 tokens, $0.0150\n"
    )


def test_elsewhere_each_result_is_a_plain_line() -> None:
    stream = io.StringIO()
    progress = Progress(2, 2, stream)
    progress.start()
    progress.add(line("a", "done", 10, 0.0))
    progress.add(line("b", "failed", 0, 0.0))
    progress.summary(2.0, interrupted=True)
    assert stream.getvalue().splitlines() == [
        "rpc-agent batch: 2 task(s) to run, 2 at a time",
        "rpc-agent batch: [1/2] a done in 1.5 s",
        "rpc-agent batch: [2/2] b failed in 1.5 s: timed out after 1 s",
        "rpc-agent batch: interrupted in 2.0 s, 1.00 tasks/s: 1 done, 1 failed; 10 tokens, $0.0000",
    ]
