"""The cyclic collector run between answers (``rpc_agent.io.collector``)."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Callable, Iterator

import pytest

from rpc_agent.io import collector
from rpc_agent.io.collector import QuietCollector, due
from rpc_agent.io.foreground import Foreground


class Cycle:
    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def automatic_collector_back() -> Iterator[None]:
    yield
    gc.enable()


def _wait_until(test: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if test():
            return True
        time.sleep(0.01)
    return False


def _garbage() -> weakref.ref[Cycle]:
    """A cycle only a collection frees, and enough new containers to make one due."""
    garbage = Cycle()
    gone = weakref.ref(garbage)
    del garbage
    for _ in range(gc.get_threshold()[0] * 3):
        Cycle()
    return gone


def _busy_collector() -> tuple[Foreground, QuietCollector]:
    """A quiet collector started while an answer is being made."""
    foreground = Foreground()
    quiet = QuietCollector(foreground)
    foreground.begin()
    quiet.start()
    return foreground, quiet


def test_garbage_waits_for_the_foreground_to_end_and_then_goes(
    monkeypatch: pytest.MonkeyPatch, automatic_collector_back: None
) -> None:
    monkeypatch.setattr(collector, "PATIENCE", 30.0)
    foreground, quiet = _busy_collector()
    try:
        assert not gc.isenabled()
        gone = _garbage()
        time.sleep(0.3)
        assert gone() is not None  # not collected in the middle of an answer
        foreground.end()
        assert _wait_until(lambda: gone() is None)
        assert quiet.collections[0] + quiet.collections[1] + quiet.collections[2] >= 1
    finally:
        quiet.stop()
    assert gc.isenabled()


def test_a_due_collection_does_not_wait_for_ever(
    monkeypatch: pytest.MonkeyPatch, automatic_collector_back: None
) -> None:
    """A prompt streams for minutes as one request: cycles must not pile up meanwhile."""
    monkeypatch.setattr(collector, "PATIENCE", 0.05)
    foreground, quiet = _busy_collector()
    try:
        gone = _garbage()
        assert _wait_until(lambda: gone() is None)
    finally:
        foreground.end()
        quiet.stop()


def test_the_generation_due_follows_the_collectors_thresholds(automatic_collector_back: None) -> None:
    thresholds = gc.get_threshold()
    gc.disable()
    try:
        gc.collect()
        gc.set_threshold(100, 1_000_000, 1_000_000)
        assert due() == -1
        kept: list[list[int]] = [[] for _ in range(500)]  # containers that stay: the young count goes up
        assert due() == 0
        gc.set_threshold(100, 0, 0)  # the older two generations never due
        assert due() == 0
        del kept
    finally:
        gc.set_threshold(*thresholds)
