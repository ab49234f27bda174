"""Work the session store does in threads of its own, and the foreground it gives way to.

A server opens a long session and builds its tree in a thread; it frees the session it left in
another. Both are pure Python and share one GIL with the event loop: when a request comes in
meanwhile, every step of its handler waits up to a switch interval for the GIL, and the answer
(a ``get_messages`` right after a switch, a burst of ``set_label``) takes twice as long.
Background work therefore asks first: the server marks each request it is serving and each line
it has yet to write on its ``Foreground`` (a 33 MB answer is still foreground while the kernel
copies it into the pipe, which takes a core of its own), and a background slice calls
``Background.pause`` between its slices. The wait is bounded, so work still advances while a
long request (a prompt that streams for minutes) is in flight, and a request that needs the
work done (``get_tree`` before the rows are ready) does the rest itself.

The server creates one ``Background`` and passes it down (transport, router, agent, store);
code that is given none (an embedding program, the tests, the ACP front) starts no thread and
does the same work when it is asked for.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Protocol

QUIET_WAIT = 0.05
"""Longest a background slice waits for the foreground work under way to end."""
SLICE_PAUSE = 0.001
"""Seconds a background thread sleeps between slices. A thread that never sleeps gives the GIL
up only when the interpreter makes it (every 5 ms): each time the writer thread comes back
from a write, or the reader from a read, it would wait that long."""


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


def no_pause() -> None:
    """The pause of work done in the caller's own thread: there is nothing to give way to."""


class Background:
    """The threads the store's background work runs in, and the foreground they give way to."""

    def __init__(self, foreground: Foreground | None = None) -> None:
        self.foreground = foreground if foreground is not None else Foreground()

    def pause(self) -> None:
        """Between two slices: let the requests being served finish first, then give the GIL
        up for a moment (see ``SLICE_PAUSE``)."""
        self.foreground.wait_quiet()
        time.sleep(SLICE_PAUSE)

    def start(self, target: Callable[[], None], name: str) -> threading.Thread:
        """Run ``target`` in a daemon thread (the process may end while it runs: it only
        prepares or frees what is in memory)."""
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        return thread

    def free_when_unread(self, session: Freeable) -> bool:
        """Free a session that only the caller holds in pieces, in a thread; False (and
        nothing done) while anyone else still holds it.

        Freeing a 100,000-entry session when its last reference goes is one long C call that
        holds the GIL, so that the event loop answers nothing meanwhile; in pieces, with a
        pause between them, the requests go first. A session still held (a request reading it
        in a worker thread, the ACP front's own) is left to the usual freeing.
        """
        # Counted here, against a fresh object held as ``session`` is (by one name of this
        # frame), rather than against a fixed number: how many references a call adds
        # differs between CPython versions, and a count taken one call further down would
        # include this frame's name too and never find the caller alone.
        probe = object()
        if _references(session) > _references(probe) + 1:  # + 1: the caller's name
            return False
        self.start(lambda: session.free_in_pieces(self.pause), "free-session")
        return True


class Freeable(Protocol):
    """What ``Background.free_when_unread`` frees: a session view."""

    def free_in_pieces(self, pause: Callable[[], None]) -> None: ...


def _references(item: object) -> int:
    return sys.getrefcount(item)
