"""Whether the process owes somebody an answer, so that background work can wait its turn.

A server opens a long session and starts building its tree in a thread; it frees the session it
left in another. Both are pure Python and share one GIL with the event loop: when a request
comes in meanwhile, every step of its handler waits up to a switch interval for the GIL, and the
answer (a ``get_messages`` right after a switch, a burst of ``set_label``) takes twice as long.
Background work therefore asks first: the front marks each request it is serving and each line
it has yet to write (``begin``/``end``: a 33 MB answer is still foreground while the kernel
copies it into the pipe, which takes a core of its own), and a background loop calls
``wait_quiet`` between its slices. The wait is bounded, so work still advances while a long
request (a prompt that streams for minutes) is in flight, and a request that needs the work
done (``get_tree`` before the rows are ready) does the rest itself.

One per process: the GIL it stands for is one per process too.
"""

from __future__ import annotations

import threading

QUIET_WAIT = 0.05
"""Longest a background slice waits for the foreground work under way to end."""


class Foreground:
    """A count of the pieces of foreground work under way, and an event set while there are none."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._under_way = 0
        self._quiet = threading.Event()
        self._quiet.set()

    def begin(self, count: int = 1) -> None:
        """``count`` more pieces of foreground work (requests, lines to write) are under way."""
        with self._lock:
            self._under_way += count
            self._quiet.clear()

    def end(self, count: int = 1) -> None:
        with self._lock:
            self._under_way = max(self._under_way - count, 0)
            if self._under_way == 0:
                self._quiet.set()

    @property
    def under_way(self) -> int:
        return self._under_way

    def wait_quiet(self, limit: float | None = None) -> bool:
        """Return once no foreground work is under way, or after ``limit`` seconds (default
        ``QUIET_WAIT``); True if quiet."""
        return self._quiet.wait(QUIET_WAIT if limit is None else limit)


FOREGROUND = Foreground()
