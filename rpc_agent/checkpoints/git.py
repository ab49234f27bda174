"""The shadow repository's git: one command line, one environment, one lock.

Every call names the shadow ``GIT_DIR``, its own index and the working tree explicitly and
starts from an environment of our own, so no ``GIT_*`` variable, global or system config,
hook, signing key or fsmonitor of the user's reaches it, and the user's ``.git`` (index, refs,
``info/exclude``) is never read or written. Work on one shadow repository is serialized by an
``flock`` on a file beside it: two servers (or a server and ``rpc-agent rewind``) on the same
folder take turns instead of meeting on git's ``index.lock``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

from rpc_agent.errors import CheckpointError

_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.filemode=true",
    "core.quotePath=false",
    "core.preloadIndex=true",
    "core.untrackedCache=true",
    "core.fsync=none",
    "core.looseCompression=1",
    "commit.gpgSign=false",
    "gc.auto=0",
    "core.logAllRefUpdates=false",
    "fastimport.unpackLimit=0",
    "maintenance.auto=false",
    "advice.addEmbeddedRepo=false",
    "advice.addIgnoredFile=false",
)


class ShadowGit:
    """git for one working directory, whose objects and index live in ``git_dir``."""

    def __init__(self, git_dir: Path, work_tree: Path) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.index_file = git_dir / "index"
        self.lock_file = git_dir.with_name(git_dir.name + ".lock")
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": str(git_dir),
            "XDG_CONFIG_HOME": str(git_dir),
            "LC_ALL": "C",
            "GIT_DIR": str(git_dir),
            "GIT_WORK_TREE": str(work_tree),
            "GIT_INDEX_FILE": str(self.index_file),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": "rpc-agent",
            "GIT_AUTHOR_EMAIL": "rpc-agent@localhost",
            "GIT_COMMITTER_NAME": "rpc-agent",
            "GIT_COMMITTER_EMAIL": "rpc-agent@localhost",
        }

    def argv(self, args: list[str]) -> list[str]:
        argv = ["git"]
        for item in _CONFIG:
            argv += ["-c", item]
        return argv + args

    def run(self, args: list[str], *, input: bytes | None = None, ok: tuple[int, ...] = (0,)) -> bytes:
        """Run git and return its stdout; a failure is a CheckpointError quoting git's stderr."""
        try:
            done = subprocess.run(
                self.argv(args),
                input=input,
                capture_output=True,
                env=self.env,
                cwd=self.work_tree,
                check=False,
            )
        except OSError as exc:  # no git at all, or the folder vanished
            raise CheckpointError(f"cannot run git: {exc}") from exc
        if done.returncode not in ok:
            message = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
            raise CheckpointError(f"git {args[0]} failed: {message[:500]}")
        return done.stdout

    def popen(self, args: list[str]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.argv(args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self.env,
            cwd=self.work_tree,
        )

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the repository for one snapshot or restore; creates it on first use."""
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not (self.git_dir / "HEAD").exists():
                self._init()
            yield
        finally:
            os.close(fd)  # closing drops the flock

    def _init(self) -> None:
        """One ``git init`` in our environment: with ``GIT_DIR`` and ``GIT_WORK_TREE`` set, git
        creates the repository where ``GIT_DIR`` says, not bare, its work tree the folder. No
        template: its sample hooks never run here (``core.hooksPath``) and its ``info/exclude``
        is ours to write."""
        try:
            self.run(["init", "-q", "--template="])
        except CheckpointError as exc:
            raise CheckpointError(f"cannot create the checkpoint repository {self.git_dir}: {exc}") from exc
        (self.git_dir / "HEAD").write_text("ref: refs/heads/snapshot\n")
        (self.git_dir / "info").mkdir(exist_ok=True)

    def index_entry_count(self) -> int:
        """How many files the shadow index holds (read from its header, no git process)."""
        try:
            with open(self.index_file, "rb") as f:
                head = f.read(12)
        except FileNotFoundError:
            return 0
        return int.from_bytes(head[8:12], "big") if len(head) == 12 and head[:4] == b"DIRC" else 0

    def write_exclude(self, patterns: list[str]) -> None:
        """The shadow repository's own ``info/exclude`` (the session store, our temp files)."""
        path = self.git_dir / "info" / "exclude"
        text = "".join(p + "\n" for p in patterns)
        try:
            if path.read_text() == text:
                return
        except OSError:
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name("exclude.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)

    def head_tree(self) -> str | None:
        """The tree of the last snapshot of the index (what ``git status`` compares with)."""
        try:
            text = (self.git_dir / "rpc-agent-head-tree").read_text().strip()
        except OSError:
            return None
        return text or None

    def set_head(self, tree: str) -> None:
        """HEAD becomes a commit of ``tree``, so ``git status`` lists only what changed since."""
        commit = self.run(["commit-tree", tree, "-m", "snapshot"]).decode().strip()
        ref = self.git_dir / "refs" / "heads" / "snapshot"
        ref.parent.mkdir(parents=True, exist_ok=True)
        tmp = ref.with_name("snapshot.tmp")
        tmp.write_text(commit + "\n")
        os.replace(tmp, ref)
        self.mark_head(tree)

    def mark_head(self, tree: str) -> None:
        """Remember HEAD's tree (HEAD itself was just set: by ``set_head`` or fast-import)."""
        marker = self.git_dir / "rpc-agent-head-tree"
        tmp = marker.with_name("rpc-agent-head-tree.tmp")
        tmp.write_text(tree + "\n")
        os.replace(tmp, marker)

    @property
    def _last_file(self) -> Path:
        return self.git_dir / "rpc-agent-last-state"

    def last_state(self) -> str | None:
        """The tree the folder was last seen as, by any session (a snapshot or a restore)."""
        try:
            text = self._last_file.read_text().strip()
        except OSError:
            return None
        return text or None

    def set_last_state(self, tree: str) -> None:
        tmp = self._last_file.with_name("rpc-agent-last-state.tmp")
        tmp.write_text(tree + "\n")
        os.replace(tmp, self._last_file)

    def keep(self, key: str, tree: str) -> None:
        """A ref per (session, tree): what a session's checkpoints need outlives any prune.

        Written as a loose ref file, as git does, to spare a process per snapshot."""
        folder = self.git_dir / "refs" / "rpc-agent" / key
        ref = folder / tree
        if ref.exists():
            return
        folder.mkdir(parents=True, exist_ok=True)
        ref.write_text(tree + "\n")

    def forget(self, key: str) -> None:
        """Drop a session's refs and prune what nothing else keeps."""
        folder = self.git_dir / "refs" / "rpc-agent" / key
        if folder.is_dir():
            for ref in folder.iterdir():
                ref.unlink(missing_ok=True)
            folder.rmdir()
        self.run(["repack", "-a", "-d", "-q"])  # packed objects nothing keeps are dropped
        self.run(["prune", "--expire=now"])
