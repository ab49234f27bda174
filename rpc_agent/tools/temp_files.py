"""Files a tool leaves behind for the model to read later, owned by the session they belong to.

``bash`` saves the full output of a command whose output it had to cut, and gives the model
the path. Nobody else knows of that file: unless its session removes it when it closes, it
stays in the temp folder for good. A session's files go when it is switched
away from or closed, and files made outside any session when the process exits.
"""

from __future__ import annotations

import atexit
import contextlib
import os


class TempFiles:
    def __init__(self) -> None:
        self._paths: set[str] = set()

    def add(self, path: str) -> None:
        self._paths.add(path)

    def remove(self, path: str) -> None:
        """Delete one file now (it is no longer referred to)."""
        self._paths.discard(path)
        with contextlib.suppress(OSError):
            os.unlink(path)

    def remove_all(self) -> None:
        paths, self._paths = self._paths, set()
        for path in paths:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def __len__(self) -> int:
        return len(self._paths)


class UnownedTempFiles(TempFiles):
    """Files made by tools run outside a session (tests, scripts): removed at exit.

    The exit function is registered with the first such file, not on import: a program that
    imports the tools and leaves no file has nothing registered in its name.
    """

    def __init__(self) -> None:
        super().__init__()
        self._registered = False

    def add(self, path: str) -> None:
        if not self._registered:
            atexit.register(self.remove_all)
            self._registered = True
        super().add(path)


UNOWNED = UnownedTempFiles()
