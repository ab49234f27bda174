"""The one-writer lock of a session file, which follows the file itself, not its name."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path

from rpc_agent.errors import SessionLockedError
from rpc_agent.regular_files import open_regular


class SessionLock:
    """An advisory, exclusive lock that says one writer owns a session file.

    The lock follows the file, not the spelling of its path, in two parts:

    * ``flock`` on a sidecar ``<resolved path>.lock``: the path with symlinks resolved, so a
      symlink and the file it names share one sidecar. It holds the owner's pid for the error
      message, is removed on release, and survives the atomic rewrites that replace the
      session file itself;
    * ``flock`` on the session file itself (its device and inode), so a hard link, which
      resolves to another path, still meets the owner's lock. It is taken when the file
      exists, and again after a rewrite gave the path a new inode (``follow``). The owner's
      pid comes from ``/proc/locks``.

    ``flock`` conflicts between two opens even inside one process, so a second manager on the
    same file is refused too.
    """

    def __init__(self, session_path: Path) -> None:
        self.session_path = session_path
        resolved = Path(os.path.realpath(session_path))
        self.path = resolved.with_name(resolved.name + ".lock")
        self._fd: int | None = None
        self._file_fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(10):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise SessionLockedError(self.session_path, self._holder()) from None
                raise
            # The previous owner may have unlinked the sidecar between our open and flock:
            # only a lock on the file that is at the path right now counts.
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.write(fd, str(os.getpid()).encode())
                self._fd = fd
                try:
                    self.follow_path()
                except BaseException:
                    self.release()
                    raise
                return
            os.close(fd)
        raise SessionLockedError(self.session_path, None)

    def follow_path(self) -> None:
        """Lock the file now at the session path (nothing to do while there is none)."""
        try:
            fd = open_regular(self.session_path, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            self.follow(fd)
        finally:
            os.close(fd)

    def follow(self, fd: int) -> None:
        """Lock the file open at ``fd`` (the session file, once it exists or was replaced)."""
        info = os.fstat(fd)
        if self._file_fd is not None:
            held = os.fstat(self._file_fd)
            if (held.st_dev, held.st_ino) == (info.st_dev, info.st_ino):
                return
        own = os.dup(fd)
        try:
            fcntl.flock(own, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(own)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise SessionLockedError(self.session_path, flock_holder(info)) from None
            raise
        previous, self._file_fd = self._file_fd, own
        if previous is not None:
            os.close(previous)

    def _holder(self) -> int | None:
        try:
            return int(self.path.read_text().strip() or "0") or None
        except (OSError, ValueError):
            return None

    def release(self) -> None:
        if self._file_fd is not None:
            fd, self._file_fd = self._file_fd, None
            with contextlib.suppress(OSError):
                os.close(fd)
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(self._fd)
        self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None


def flock_holder(info: os.stat_result) -> int | None:
    """The pid holding a ``flock`` on the file ``info`` describes, from ``/proc/locks``."""
    key = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as table:
            for line in table:
                # "12: FLOCK  ADVISORY  WRITE 4242 fe:00:1234 0 EOF"; waiters have a "->" column.
                fields = [field for field in line.split() if field != "->"]
                if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == key:
                    return int(fields[4]) or None
    except (OSError, ValueError):
        return None
    return None
