"""Queue, coalesce, write, wake the waiters: the one design behind stdout and the session file.

Producers ``put`` items synchronously on one queue; on the event loop, so the order of the
items is the order of the calls. One batch at a time takes everything queued
and hands it to a blocking ``write`` in a worker thread; when that returns, the waiters of every
item in the batch wake. Items queued meanwhile make the next batch, so many concurrent producers
share a handful of writes (and fsyncs) instead of paying for one each.

Who drains: an owner with a task group runs ``run()`` as the one drain task (stdout). A session
file has no task group to put a task in (managers are made and closed synchronously, by tests
and tools too), so there the drain moves with the waiters: the first waiter writes one batch,
and hands the next to one waiter queued behind it (the heir); every other waiter sleeps until
its own batch ends. Before it takes its batch the writing waiter lets the ready tasks run once,
so the appenders the previous batch woke get their next items into this batch (group commit
without a timer). Either way exactly one batch is in flight, so items land in ``put`` order,
and each waiter wakes once.

The queue is a list and the drain task's wake-up an ``anyio.Event``, not an anyio memory object
stream: the stream would buy the drain task's wake-up only, and would make every session manager
owe a ``close()`` (an unclosed stream warns when collected) and cost a call per item and batch.

The first failure is latched: ``latch`` turns it into the error raised to the waiters of the
failed batch and to every later call, and nothing queued after it is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

T = TypeVar("T")


def _same(error: Exception) -> Exception:
    return error


class Coalescer(Generic[T]):
    """Ordered, coalesced, acknowledged writes of ``T`` items through a blocking ``write``.

    ``shield``: a batch taken off the queue is always written to the end, even when the task
    writing it is cancelled (the session file: its lines are promised). Without it, cancelling
    the drain task abandons the worker thread (stdout: a client that stopped reading must not
    hold up shutdown forever) and latches an error for what was not written.
    """

    def __init__(
        self,
        write: Callable[[list[T]], None],
        *,
        latch: Callable[[Exception], Exception] = _same,
        shield: bool = True,
    ) -> None:
        self._write = write
        self._latch = latch
        self._shield = shield
        self._pending: list[T] = []
        self._wakeup: anyio.Event | None = None
        """Set by ``put`` when the drain task sleeps for want of items."""
        self._closed = False
        self._queued = 0
        self._done = 0
        self._inflight_upto = 0
        self._inflight: anyio.Event | None = None
        """Set when the batch being written ends; its items' waiters sleep on it."""
        self._next: anyio.Event | None = None
        """The event of the next batch: waiters of items queued behind the one in flight."""
        self._heir: anyio.Event | None = None
        """Wakes the one waiter that writes the next batch (when no drain task runs)."""
        self._draining = False
        self.error: Exception | None = None
        """The latched failure, if a batch failed."""
        self.batches = 0
        """How many batches reached ``write`` (for tests and benchmarks of coalescing)."""

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    def put(self, item: T) -> int:
        """Queue one item; returns its ticket for ``wait``. Raises the latched error."""
        self.check()
        self._pending.append(item)
        self._queued += 1
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None
        return self._queued

    @property
    def has_pending(self) -> bool:
        return self._done < self._queued

    async def wait(self, ticket: int | None = None) -> None:
        """Return once the item with ``ticket`` (default: everything queued) is written."""
        target = self._queued if ticket is None else ticket
        while self._done < target:
            self.check()
            if self._inflight is not None and target <= self._inflight_upto:
                await self._inflight.wait()
            elif self._draining or self._heir is not None:
                if self._next is None:
                    self._next = anyio.Event()
                await self._next.wait()
            else:
                heir = self._heir = anyio.Event()
                try:
                    if self._inflight is None:
                        # Our turn now, but first one pass of the ready tasks (holding the turn,
                        # so they queue behind us): the waiters the last batch just woke append
                        # their next items, and this batch takes them all instead of leaving
                        # them to the next fsync.
                        await anyio.lowlevel.checkpoint()
                        if self._heir is heir:
                            self._heir = None
                        await self._write_next()
                    else:
                        await heir.wait()
                except BaseException:
                    # Cancelled before (or just as) its turn came: let a sleeper take the turn.
                    if self._heir is heir:
                        self._heir = None
                    self._wake_next()
                    raise

    async def run(self) -> None:
        """The drain task: writes batches as items arrive, until ``close()`` and all is written."""
        self._draining = True
        try:
            while self._pending or not self._closed:
                if self._pending and self.error is None:
                    await self._write_next()
                else:
                    self._pending = []
                    wakeup = self._wakeup = anyio.Event()
                    await wakeup.wait()
        finally:
            self._draining = False
            self._wake_next()

    def close(self) -> None:
        """No more items: ``run()`` returns once what is queued is written."""
        self._closed = True
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None

    def flush_sync(self) -> None:
        """Write what is queued in this thread, without an event loop (shutdown paths)."""
        self.check()
        if self._inflight is not None:
            raise RuntimeError("flush_sync while a batch is being written; await wait() instead")
        batch, self._pending = self._pending, []
        if not batch:
            return
        outcome = self._write_batch(batch)
        if outcome is not None:
            self.error = self._latch(outcome)
            raise self.error from outcome
        self._done += len(batch)

    async def _write_next(self) -> None:
        batch, self._pending = self._pending, []
        if not batch:
            return
        upto = self._done + len(batch)
        done, self._next = self._next or anyio.Event(), None
        self._inflight_upto, self._inflight = upto, done
        outcome: list[Exception | None] = []
        try:
            if self._shield:
                # Once the items are off the queue they are written and accounted for, even
                # when this task is cancelled (also right at this await, before the thread runs).
                with anyio.CancelScope(shield=True):
                    outcome.append(await anyio.to_thread.run_sync(self._write_batch, batch))
            else:
                outcome.append(
                    await anyio.to_thread.run_sync(self._write_batch, batch, abandon_on_cancel=True)
                )
        finally:
            failure = outcome[0] if outcome else RuntimeError("batch not written")
            if failure is None:
                self._done = upto
            elif self.error is None:
                self.error = self._latch(failure)
            self._inflight = None
            done.set()
            heir, self._heir = self._heir, None
            if heir is not None:
                heir.set()
            if self.error is not None:
                self._pending = []  # dropped: nothing after a failure is written
                self._wake_next()

    def _write_batch(self, batch: list[T]) -> Exception | None:
        self.batches += 1
        try:
            self._write(batch)
        except Exception as exc:
            return exc
        return None

    def _wake_next(self) -> None:
        """Wake the sleepers of the next batch; they look again (one of them will write it)."""
        sleepers, self._next = self._next, None
        if sleepers is not None:
            sleepers.set()
