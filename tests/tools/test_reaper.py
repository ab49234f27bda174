"""The reaper kills the process groups still registered when its owner's pipe ends, and only
those; a reaper that is gone never fails a tool."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from rpc_agent.tools.reaper import Reaper

WAIT = 10.0


@pytest.fixture
def groups() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Commands in process groups of their own, as the bash tool starts them; killed after."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()


def start_group(groups: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    groups.append(process)
    return process


def test_closing_kills_the_groups_still_registered_and_no_other(
    groups: list[subprocess.Popen[bytes]],
) -> None:
    reaper = Reaper()
    reaper.start()
    watched, forgotten = start_group(groups), start_group(groups)
    reaper.watch(watched.pid)
    reaper.watch(forgotten.pid)
    reaper.forget(forgotten.pid)
    reaper.close()
    assert watched.wait(WAIT) == -9
    assert forgotten.poll() is None


def test_a_reaper_that_died_fails_no_tool_and_a_new_one_takes_over(
    groups: list[subprocess.Popen[bytes]],
) -> None:
    reaper = Reaper()
    reaper.start()
    helper = reaper._process
    assert helper is not None
    helper.kill()
    helper.wait()
    first = start_group(groups)
    reaper.watch(first.pid)  # the pipe's reader is gone: no error
    reaper.watch(first.pid)
    reaper.start()  # the next command brings a new reaper
    second = start_group(groups)
    reaper.watch(second.pid)
    reaper.close()
    assert second.wait(WAIT) == -9


def test_closing_a_reaper_never_started_does_nothing() -> None:
    Reaper().close()
