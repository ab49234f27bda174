"""Recording a state: the files that changed and the new trees, in one pack, by ``git fast-import``.

``git add`` and ``write-tree`` store every new blob and every rewritten tree as a loose object,
one file each, and creating a file is the dearest thing a disk does: a change to 100 files in
100 folders made about 200 files per snapshot, and ``write-tree`` then checked every blob of
the rewritten folders for existence, each a ``stat`` of a loose file. Here one ``fast-import``
reads the changed files (as this process streams them), starts from the last state's tree and
writes blobs, trees and the commit into a single pack; the shadow index then takes the same
tree by ``read-tree -m`` (no file is read twice; the entries that did not change keep their
stat data, the new ones get theirs from the next ``git status``, which hashes only those).
Packs are rolled up geometrically once there are many, so an object lookup never walks
hundreds of them.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from rpc_agent.checkpoints.git import ShadowGit
from rpc_agent.errors import CheckpointError

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MAX_PACKS = 24
"""More packs than this and the small ones are rolled into one (``repack --geometric``)."""


@dataclass(slots=True)
class Recorded:
    tree: str
    unreadable: list[str] = field(default_factory=list)
    """Paths that could not be read (left as they were in the base state)."""


def quote(path: str) -> bytes:
    """A path in fast-import's C-style quotes (any byte but NUL may appear in a name)."""
    raw = path.encode("utf-8", "surrogateescape")
    out = bytearray(b'"')
    for byte in raw:
        if byte in (0x22, 0x5C):
            out += b"\\" + bytes([byte])
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    out += b'"'
    return bytes(out)


def _read(path: Path, st: os.stat_result) -> tuple[str, bytes] | None:
    """(git mode, content) of a file or link as it is now; None when it is gone or neither."""
    if stat.S_ISLNK(st.st_mode):
        return "120000", os.fsencode(os.readlink(path))
    if not stat.S_ISREG(st.st_mode):
        return None
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        chunks: list[bytes] = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return ("100755" if st.st_mode & stat.S_IXUSR else "100644"), b"".join(chunks)


def record(git: ShadowGit, cwd: Path, base: str | None, paths: list[str], remove: list[str]) -> Recorded:
    """The tree of ``base`` with ``paths`` as they are on disk now (a path that is gone, or is
    a folder now, removed) and ``remove`` taken out; the shadow index and HEAD follow it."""
    result = Recorded(EMPTY_TREE)
    proc = subprocess.Popen(
        git.argv(["fast-import", "--quiet", "--force"]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=git.env,
        cwd=git.work_tree,
    )
    assert proc.stdin is not None
    try:
        out = proc.stdin
        out.write(b"feature done\ncommit refs/heads/snapshot\n")
        out.write(b"committer rpc-agent <rpc-agent@localhost> 0 +0000\ndata 8\nsnapshot\n")
        if base is not None and base != EMPTY_TREE:
            out.write(b'M 040000 %s ""\n' % base.encode())
        for path in remove:
            out.write(b"D " + quote(path) + b"\n")
        for path in paths:
            try:
                found = _read(cwd / path, os.lstat(cwd / path))
            except (FileNotFoundError, NotADirectoryError):  # gone, or a file is where its folder was
                found = None
            except OSError:
                result.unreadable.append(path)
                continue
            if found is None:
                out.write(b"D " + quote(path) + b"\n")
                continue
            mode, content = found
            out.write(b"M %s inline %s\ndata %d\n" % (mode.encode(), quote(path), len(content)))
            out.write(content)
            out.write(b"\n")
        out.write(b'ls ""\n\ndone\n')
        out.close()
    except BrokenPipeError:
        pass  # fast-import stopped: its error is read below
    assert proc.stdout is not None
    assert proc.stderr is not None
    answer = proc.stdout.read()
    errors = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    if proc.wait() != 0:
        message = errors.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
        raise CheckpointError(f"git fast-import failed: {message[:500]}")
    words = answer.split()
    if len(words) >= 3 and words[1] == b"tree":
        result.tree = words[2].decode()
    elif not answer.startswith(b"missing"):
        raise CheckpointError(f"git fast-import gave no tree: {answer[:200]!r}")
    # The index becomes the tree (a one-way merge keeps the stat data of every entry that did
    # not change) with a whole cache-tree, so the next ``git status`` compares it with HEAD
    # without reading a single tree object.
    git.run(["read-tree", "-m", "-i", result.tree])
    git.mark_head(result.tree)
    _roll_up(git)
    return result


def _roll_up(git: ShadowGit) -> None:
    try:
        packs = sum(1 for name in os.listdir(git.git_dir / "objects" / "pack") if name.endswith(".idx"))
    except OSError:
        return
    if packs > MAX_PACKS:
        git.run(["repack", "-d", "-q", "--geometric=2"])
