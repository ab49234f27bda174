"""The process-wide measures the ``rpc-agent`` command takes, and nothing else takes.

The library leaves the process alone: importing and using ``rpc_agent`` (an embedding program,
the tests) changes neither the cyclic collector, nor the environment, nor ``sys``. The command
owns its process, and takes the measures below for it, each named with its reason. They are
all off with ``RPC_AGENT_NO_TUNING=1`` (any value but empty or ``0``); ``bench/`` runs the
server both ways and prints every row for each.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
from dataclasses import dataclass

OFF_VARIABLE = "RPC_AGENT_NO_TUNING"
"""Set (to anything but empty or ``0``) to start the command without any of the measures."""


@dataclass(frozen=True, slots=True)
class Measure:
    name: str
    reason: str


COLLECTOR_PAUSED_AT_START_UP = Measure(
    "collector paused at start-up, start-up's objects frozen",
    "start-up makes tens of thousands of objects that live as long as the process (modules, "
    "classes, pydantic's models); the cyclic collector would walk them about a hundred times "
    "before the first answer, finding nothing to free, and every full collection after that "
    "would walk them again (gc.freeze moves them out of its way)",
)
EXIT_WITHOUT_TEARDOWN = Measure(
    "exit without the interpreter's teardown",
    "once the front has returned (sessions closed and synced, answers written), the interpreter "
    "would still free every object of a large module graph one at a time: some 40 ms idle, a few "
    "hundred on a loaded machine, and an editor gives an agent two seconds to exit once it closed "
    "its stdin (the ACP SDK's client, then it kills it). The exit functions (atexit: logging, "
    "temp files) run first, then the process ends",
)
SESSION_FROZEN_ONCE_OPENED = Measure(
    "a session just opened collected once, then frozen",
    "a session opened (at start-up, or by a switch, a fork, a new session) holds its entries "
    "until it is left, tens of thousands of tracked objects for a long one, which every full "
    "collection would walk again at a moment set by allocation counts, often inside the burst "
    "of requests that follows an open; one collection right after the open, then gc.freeze, "
    "takes them out of its way (a session left is still freed by reference counting)",
)
MEASURES = (COLLECTOR_PAUSED_AT_START_UP, EXIT_WITHOUT_TEARDOWN, SESSION_FROZEN_ONCE_OPENED)


def wanted(environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Whether the command takes the measures: yes unless ``RPC_AGENT_NO_TUNING`` says no."""
    value = (os.environ if environ is None else environ).get(OFF_VARIABLE, "")
    return value in ("", "0")


class Tuning:
    """The measures for one run of the command: ``start_up`` before the server's modules are
    loaded, ``started`` once they are, ``session_opened`` each time an agent's session is
    opened or replaced, ``end`` when the command returns, ``leave`` to exit."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._paused = False

    def start_up(self) -> None:
        if not self.enabled:
            return
        if gc.isenabled():
            gc.disable()
            self._paused = True

    def started(self) -> None:
        """Start-up is over: freeze what it made and give the collector back."""
        if self._paused:
            gc.freeze()
            gc.enable()
            self._paused = False

    def session_opened(self) -> None:
        """An agent's session was opened or replaced (the fronts call it; ``main`` passes it)."""
        if self.enabled and gc.isenabled():
            gc.collect()
            gc.freeze()

    def end(self) -> None:
        """Also after an early exit (a bad flag, an unreadable settings file)."""
        if self._paused:
            gc.enable()
            self._paused = False

    def leave(self, code: int) -> int:
        """End the process with ``code`` now (tuned), or give ``code`` back for the usual exit."""
        if not self.enabled:
            return code
        atexit._run_exitfuncs()  # what the usual exit runs first: logging's flush, temp files
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
