"""A batch's answers, collected in request order and written as one array line."""

from __future__ import annotations

from collections.abc import Callable

from rpc_agent.protocol.jsonrpc import Reply
from rpc_agent.server.replies import encode_reply


class Batch:
    """Collects the answers of one batch and writes them as one array line once all are in.

    Items answered at once are stored while the batch is read (``collecting``); items running
    in tasks get a ``deliver_to`` callback. An all-notification batch writes nothing.
    """

    __slots__ = ("collecting", "outstanding", "replies", "write_line")

    def __init__(self, write_line: Callable[[bytes], None], size: int) -> None:
        self.write_line = write_line
        self.replies: list[Reply | None] = [None] * size
        self.outstanding = 0
        self.collecting = True

    def deliver_to(self, index: int) -> Callable[[Reply], None]:
        self.outstanding += 1

        def deliver(reply: Reply) -> None:
            self.replies[index] = reply
            self.outstanding -= 1
            self.maybe_finish()

        return deliver

    def maybe_finish(self) -> None:
        if self.collecting or self.outstanding:
            return
        replies = [r for r in self.replies if r is not None]
        if replies:
            self.write_line(b"[" + b",".join(map(encode_reply, replies)) + b"]\n")
