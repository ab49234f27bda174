"""Writing a stored state back into the working directory, one atomic step per file.

Each file is written to a temporary file in its own folder and renamed over the old one, so a
restore killed at any moment leaves every file either as it was or as restored, and can simply
run again. Nothing is written through a symlink: a link in a stored state comes back as a link,
a folder on the way that is a link stops that path, and ``..``, absolute paths, ``.git`` and
the session store's files are refused. Deletions go first (deepest first, emptied folders
after them), then the writes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from rpc_agent.checkpoints.store import TEMP_PREFIX, Change, Skipped, WorkspaceStore
from rpc_agent.errors import CheckpointError
from rpc_agent.fileio import write_all
from rpc_agent.store.files import read_header

_FILE_MODES = {"100644", "100755"}
_LINK_MODE = "120000"


@dataclass(slots=True)
class RestoreReport:
    changed: list[Change] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


class UnsafePathError(Exception):
    pass


class Restorer:
    def __init__(self, store: WorkspaceStore, protected: list[Path]) -> None:
        self.store = store
        self.root = Path(os.path.realpath(store.cwd))
        self.protected = [Path(os.path.realpath(p)) for p in protected]

    def check_path(self, path: str) -> Path:
        """The absolute place of a stored path, or UnsafePathError when it may not be written."""
        parts = path.split("/")
        if not path or path.startswith("/") or "\0" in path:
            raise UnsafePathError("an absolute or empty path")
        if any(p in ("", ".", "..") for p in parts):
            raise UnsafePathError("a path with '.', '..' or an empty part")
        if ".git" in parts:
            raise UnsafePathError("inside a .git folder")
        target = self.root.joinpath(*parts)
        for guarded in self.protected:
            if target == guarded or guarded in target.parents:
                raise UnsafePathError("part of the session store")
        return target

    def _parent_ready(self, target: Path, *, create: bool) -> None:
        """Every folder between the root and ``target`` is a real folder (made when missing)."""
        relative = target.parent.relative_to(self.root)
        current = self.root
        for part in relative.parts:
            current = current / part
            try:
                st = os.lstat(current)
            except FileNotFoundError:
                if not create:
                    raise UnsafePathError("its folder is gone") from None
                os.mkdir(current)
                continue
            if stat.S_ISLNK(st.st_mode):
                raise UnsafePathError(f"{current.relative_to(self.root)} is a symlink")
            if not stat.S_ISDIR(st.st_mode):
                raise UnsafePathError(f"{current.relative_to(self.root)} is not a folder")

    def apply(self, changes: list[Change]) -> RestoreReport:
        """Make the disk match the target side of ``changes`` (computed against the disk)."""
        report = RestoreReport()
        deletions = sorted((c for c in changes if c.status == "D"), key=lambda c: -c.path.count("/"))
        writes = sorted((c for c in changes if c.status != "D"), key=lambda c: c.path)
        emptied: set[Path] = set()
        for change in deletions:
            try:
                target = self.check_path(change.path)
                self._parent_ready(target, create=False)
                st = os.lstat(target)
                if stat.S_ISDIR(st.st_mode):
                    raise UnsafePathError("it is a folder now")
                os.unlink(target)
                emptied.add(target.parent)
            except FileNotFoundError:
                pass
            except UnsafePathError as exc:
                report.skipped.append(Skipped(change.path, f"not deleted: {exc}"))
                continue
            report.changed.append(change)
        self._remove_empty(emptied)
        with BlobReader(self.store) as blobs:
            for index, change in enumerate(writes):
                if change.new_mode not in _FILE_MODES and change.new_mode != _LINK_MODE:
                    report.skipped.append(Skipped(change.path, "a nested repository (not restored)"))
                    continue
                try:
                    target = self.check_path(change.path)
                    if change.status == "A" and os.path.lexists(target):
                        # On disk but in no snapshot: over the size limit or ignored now.
                        raise UnsafePathError("present on disk but not checkpointed (too large?)")
                    self._parent_ready(target, create=True)
                    self._write(target, change, blobs.read(change.new_sha))
                except UnsafePathError as exc:
                    report.skipped.append(Skipped(change.path, f"not written: {exc}"))
                    continue
                except OSError as exc:
                    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                        raise CheckpointError(
                            f"the disk is full: {index} of {len(writes)} files were written, "
                            f"{change.path} and the rest are unchanged; free space and restore again"
                        ) from exc
                    raise CheckpointError(f"cannot write {change.path}: {exc}") from exc
                report.changed.append(change)
        return report

    def _write(self, target: Path, change: Change, content: bytes) -> None:
        tmp = target.parent / f"{TEMP_PREFIX}{secrets.token_hex(6)}"
        try:
            existing = os.lstat(target)
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISREG(existing.st_mode) and read_header(target) is not None:
            raise UnsafePathError("a session file")
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            try:
                os.rmdir(target)  # left empty by the deletions
            except OSError:
                raise UnsafePathError(
                    "a folder with files the checkpoints do not cover is in the way"
                ) from None
        try:
            if change.new_mode == _LINK_MODE:
                os.symlink(os.fsdecode(content), tmp)
            else:
                executable = change.new_mode == "100755"
                mode = 0o755 if executable else 0o644
                if existing is not None and stat.S_ISREG(existing.st_mode):
                    kept = stat.S_IMODE(existing.st_mode)
                    if bool(kept & 0o100) == executable:
                        mode = kept  # the same kind of file: its permissions stay
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                try:
                    write_all(fd, content)
                    os.fchmod(fd, mode)
                finally:
                    os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _remove_empty(self, folders: set[Path]) -> None:
        for folder in sorted(folders, key=lambda p: -len(p.parts)):
            current = folder
            while current != self.root and self.root in current.parents:
                try:
                    os.rmdir(current)
                except OSError:
                    break
                current = current.parent


class BlobReader:
    """``git cat-file --batch``, asked one object at a time (no pipe can fill up)."""

    def __init__(self, store: WorkspaceStore) -> None:
        self.store = store
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> BlobReader:
        return self

    def read(self, sha: str) -> bytes:
        proc = self._proc
        if proc is None:
            proc = self._proc = self.store.git.popen(["cat-file", "--batch"])
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) != 3:
            raise CheckpointError(f"object {sha} is missing from the checkpoint repository")
        size = int(header[2])
        content = proc.stdout.read(size)
        proc.stdout.read(1)
        return content

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is not None:
            assert proc.stdin is not None
            assert proc.stdout is not None
            proc.stdin.close()
            proc.stdout.close()
            proc.wait()
