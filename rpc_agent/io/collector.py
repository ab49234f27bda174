"""The cyclic collector, run between answers instead of in the middle of one.

CPython starts a collection whenever enough container objects were made, in whatever thread
made them: a ``set_label`` burst right after a 100,000-entry session was opened met three of
them (young, middle and full generations, 10 + 30 + 50 ms) that walked the session's indexes,
and a full collection lands at random on any request while a big session is open. The server
therefore turns the automatic collector off and runs the same collections from a thread of its
own, when the counts call for one (CPython's own thresholds) and no answer is being made
(``foreground``). Garbage still goes: a collection that is due waits at most ``PATIENCE`` for a
quiet moment, so a prompt that streams for minutes does not let cycles pile up.
"""

from __future__ import annotations

import gc
import threading

from .foreground import FOREGROUND, Foreground

CHECK_EVERY = 0.02
"""Seconds between two looks at the collector's counts."""
PATIENCE = 1.0
"""Longest a due collection waits for the foreground work under way to end."""


class QuietCollector:
    """Owns the cyclic collector while started: ``start`` turns the automatic one off."""

    def __init__(self, foreground: Foreground = FOREGROUND) -> None:
        self._foreground = foreground
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.collections = [0, 0, 0]
        """Collections run, by generation (for tests and benchmarks)."""

    def start(self) -> None:
        if self._thread is not None:
            return
        gc.disable()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="quiet-collector", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Give the collector back to CPython (automatic collections again)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        thread.join()
        gc.enable()

    def _run(self) -> None:
        while not self._stop.wait(CHECK_EVERY):
            generation = due()
            if generation < 0:
                continue
            self._foreground.wait_quiet(PATIENCE)
            gc.collect(generation)
            self.collections[generation] += 1


def due() -> int:
    """The oldest generation CPython would collect now, -1 for none.

    The same rule as CPython's: a generation is due once its count passes its threshold (the
    young one counts new containers, the older ones the collections of the one below).
    CPython also puts off a full collection until the objects that survived into the oldest
    generation since the last one reach a quarter of it; that figure is not exposed, so a full
    collection here comes each time the threshold is passed (10 middle collections).
    """
    counts, thresholds = gc.get_count(), gc.get_threshold()
    for generation in (2, 1, 0):
        if thresholds[generation] and counts[generation] > thresholds[generation]:
            return generation
    return -1
