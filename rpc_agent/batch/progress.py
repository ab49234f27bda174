"""A batch's progress on stderr: one redrawn line on a terminal, plain lines otherwise."""

from __future__ import annotations

from typing import TextIO

from rpc_agent.batch.tasks import ResultLine

BAR_WIDTH = 24


class Progress:
    """Counts of a batch as its results come in, and the summary at the end."""

    def __init__(self, total: int, in_flight: int | None, stream: TextIO, *, skipped: int = 0) -> None:
        self.total = total
        self.in_flight = in_flight
        """How many tasks run at once (the pool's size, or Ray's window; None: not known yet)."""
        self.stream = stream
        self.skipped = skipped
        self.done = 0
        self.failed = 0
        self.tokens = 0
        self.cost = 0.0
        self.tty = stream.isatty()

    @property
    def finished(self) -> int:
        return self.done + self.failed

    @property
    def running(self) -> int:
        return min(self.in_flight or 0, self.total - self.finished)

    def set_window(self, in_flight: int) -> None:
        """Ray's window, known once Ray is up."""
        self.in_flight = in_flight
        if not self.tty:
            self.stream.write(f"rpc-agent batch: on Ray, {in_flight} task(s) at a time\n")
            self.stream.flush()

    def start(self) -> None:
        if self.skipped:
            self.stream.write(f"rpc-agent batch: {self.skipped} task(s) already in the results, skipped\n")
        if self.tty:
            self._draw()
        else:
            at_once = f", {self.in_flight} at a time" if self.in_flight else ""
            self.stream.write(f"rpc-agent batch: {self.total} task(s) to run{at_once}\n")
        self.stream.flush()

    def add(self, line: ResultLine) -> None:
        if line.get("status") == "done":
            self.done += 1
        else:
            self.failed += 1
        result = line.get("result")
        if result:
            usage = result.get("usage")
            self.tokens += int(usage.get("totalTokens") or 0) if usage else 0
            self.cost += float(result.get("costUsd") or 0)
        if self.tty:
            self._draw()
        else:
            seconds = (line.get("durationMs") or 0) / 1000
            said = f"{line.get('status')} in {seconds:.1f} s"
            if line.get("status") != "done":
                said += f": {line.get('reason')}"
            self.stream.write(f"rpc-agent batch: [{self.finished}/{self.total}] {line.get('id')} {said}\n")
        self.stream.flush()

    def _counts(self) -> str:
        return (
            f"{self.done} done, {self.running} running, {self.failed} failed, "
            f"{self.tokens:,} tokens, ${self.cost:.4f}"
        )

    def _draw(self) -> None:
        filled = BAR_WIDTH * self.finished // self.total if self.total else BAR_WIDTH
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        self.stream.write(f"\r\x1b[K[{bar}] {self.finished}/{self.total}: {self._counts()}")

    def summary(self, seconds: float, *, interrupted: bool = False) -> None:
        if self.tty:
            self.stream.write("\n")
        how = "interrupted" if interrupted else "finished"
        rate = f", {self.finished / seconds:.2f} tasks/s" if seconds > 0 and self.finished else ""
        self.stream.write(
            f"rpc-agent batch: {how} in {seconds:.1f} s{rate}: {self.done} done, {self.failed} failed"
            f"{f', {self.total - self.finished} not run' if self.total > self.finished else ''}"
            f"{f', {self.skipped} skipped' if self.skipped else ''}; "
            f"{self.tokens:,} tokens, ${self.cost:.4f}\n"
        )
        self.stream.flush()
