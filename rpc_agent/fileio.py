"""Writing a whole buffer to a file descriptor: ``os.write`` may write only part of it (a pipe,
a full disk, a signal), and every writer that goes below Python's file objects (to fsync, to
choose the mode, to write the protocol's stdout unbuffered) must loop the same way."""

from __future__ import annotations

import os


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
