"""What both in-process harnesses (tests/e2e/inprocess.py, tests/acp/acp_inprocess.py) share:
the config the real command line builds, and the log a served front writes."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from unittest import mock

from rpc_agent import cli
from rpc_agent.runtime import ServerConfig


def config_from_cli(argv: list[str], front: ModuleType) -> ServerConfig:
    """The config ``rpc-agent ARGV`` would hand to ``front.run``, built by the real ``cli.main``
    (same flags, settings files and start-up checks); ``front.run`` is swapped out meanwhile."""
    captured: list[ServerConfig] = []

    def capture(config: ServerConfig) -> int:
        captured.append(config)
        return 0

    with mock.patch.object(front, "run", capture):
        code = cli.main(argv)
    assert code == 0, f"rpc-agent {argv} would not start (exit {code})"
    assert captured, f"rpc-agent {argv} does not run {front.__name__}"
    return captured[0]


@contextmanager
def log_to(path: Path, only: Callable[[], bool] | None = None) -> Iterator[None]:
    """A served front's log records go to ``path`` (its stderr, had it been a process); with
    ``only``, just the records logged where it says yes (fronts served side by side in one
    process keep their logs apart)."""
    handler = logging.FileHandler(path, encoding="utf-8")
    if only is not None:
        handler.addFilter(lambda record: only())
    handler.setFormatter(logging.Formatter("rpc-agent: %(levelname)s %(message)s"))
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        handler.close()
