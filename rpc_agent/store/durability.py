"""What a write hands back (``PendingAppend``: the id at once, durability when awaited) and
what a failed write rolls the session back to (``Savepoint``)."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from rpc_agent.store.writer import WriteChain

__all__ = ["PendingAppend", "Savepoint"]


class PendingAppend:
    """The result of an append: the id at once, durability when awaited.

    ``await`` returns the entry id after its line is fsynced (or at once while the session is
    not yet written, or in memory). ``.id`` is there without awaiting, for callers that do
    not need to wait for the disk.
    """

    __slots__ = ("_chain", "_ticket", "id")

    def __init__(self, entry_id: str | None, chain: WriteChain | None, ticket: int | None) -> None:
        self.id = entry_id
        self._chain = chain
        self._ticket = ticket

    def __await__(self) -> Generator[Any, None, str | None]:
        if self._chain is not None and self._ticket is not None:
            yield from self._chain.wait(self._ticket).__await__()
        return self.id


@dataclass(frozen=True, slots=True)
class Savepoint:
    """What ``rollback`` goes back to: how many entries there were, and the leaf."""

    count: int
    leaf: str | None
    has_assistant: bool
