"""The AgentSession's checkpoints: when snapshots are taken, and restores over the wire.

A snapshot is taken when a user message is stored (the user's own edits since the last one
are in it) and after every tool that may change files; it runs in a worker thread while the
run goes on (the model is called meanwhile), and the next tool that may change files waits
for it, so each state is the disk exactly between two tools. A failed snapshot is an event,
never a failed turn. Restores (``navigate_tree``/``fork``/``clone`` with ``restoreFiles``,
``restore_files``) and ``get_file_changes`` wait for pending snapshots first.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup
from pydantic import BaseModel

from rpc_agent.agent.checkpoint_folders import extra_roots, skip_reason
from rpc_agent.agent.settings import AgentSettings
from rpc_agent.errors import CheckpointError, InvalidRequestError, NoCheckpointError, RestoreConflictError
from rpc_agent.protocol import checkpoints as c
from rpc_agent.protocol import methods as m
from rpc_agent.store import files, guard
from rpc_agent.store.manager import SessionManager

if TYPE_CHECKING:
    # The engine (and git behind it) is loaded by the first session that takes a snapshot or
    # restores one, not by start-up: answering ``initialize`` needs none of it.
    from rpc_agent.checkpoints import RestoreOutcome, SessionCheckpoints


class Owner(Protocol):
    """What checkpointing needs of the AgentSession it serves."""

    manager: SessionManager
    settings: AgentSettings
    home: Path | None
    session_dir: Path | None
    emit: Callable[[BaseModel], None]


logger = logging.getLogger("rpc_agent")

_SAFE_KEY = re.compile(r"[^A-Za-z0-9_.-]")
Moved = TypeVar("Moved", m.NavigateTreeResult, m.SessionChangeResult, m.ForkResult)


class _Bound:
    """The checkpoints of one SessionManager (rebuilt when the session changes)."""

    def __init__(
        self,
        key: tuple[int, str, str, tuple[str, ...]],
        engine: SessionCheckpoints | None,
        reason: str | None,
    ) -> None:
        self.key = key
        self.engine = engine
        self.reason = reason
        self.announced = False


class Checkpointing:
    def __init__(self, session: Owner) -> None:
        self.session = session
        self._bound: _Bound | None = None
        self._pending = 0
        self._idle = anyio.Event()
        self._idle.set()
        self._lock = anyio.Lock()
        self._group: TaskGroup | None = None
        self.on_restored: Callable[[list[Path]], Awaitable[None]] | None = None
        """Told the files a restore wrote (the ACP front hands them to the editor's buffers)."""

    # --- which engine ----------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        return self.session.settings.checkpoints.enabled

    def _home(self) -> Path:
        return self.session.home or files.agent_home()

    def _key(self, manager: SessionManager) -> tuple[int, str, str, tuple[str, ...]]:
        # The id alone could be a freed manager's, reused: the session's id and file too; and
        # the additional folders, which a client may change between prompts.
        folders = tuple(self.session.settings.additional_directories)
        return (id(manager), manager.session_id, str(manager.session_file), folders)

    def _engine_for(self, manager: SessionManager) -> _Bound:
        bound = self._bound
        key = self._key(manager)
        if bound is not None and bound.key == key:
            return bound
        folders = key[3]
        from rpc_agent.checkpoints import (
            CheckpointMap,
            Limits,
            SessionCheckpoints,
            WorkspaceStore,
            sidecar_path,
        )

        settings = self.session.settings.checkpoints
        cwd = Path(manager.cwd)
        reason = skip_reason(cwd, settings.max_files)
        engine: SessionCheckpoints | None = None
        if reason is None:
            session_file = manager.session_file
            sidecar = sidecar_path(Path(session_file)) if session_file is not None else None
            store = WorkspaceStore(self._home(), Path(os.path.realpath(cwd)))
            mapping = CheckpointMap.load(sidecar)
            refs = _SAFE_KEY.sub("_", manager.session_id) or "session"
            header = {"repository": str(store.git.git_dir), "cwd": str(store.cwd), "session": refs}
            if mapping.header is None:
                mapping.header_pending = header
            engine = SessionCheckpoints(
                store,
                mapping,
                refs,
                exclude=self._excluded(manager),
                limits=Limits(settings.max_file_size, settings.max_files),
                roots=extra_roots(store.cwd, folders, settings.max_files),
            )
        bound = self._bound = _Bound(key, engine, reason)
        return bound

    def _excluded(self, manager: SessionManager) -> list[Path]:
        from rpc_agent.checkpoints import sidecar_path

        home = self._home()
        found = [
            *guard.store_folders(home, (self.session.session_dir, manager.session_dir)),
            home / "checkpoints",
        ]
        if manager.session_file is not None:
            session_file = Path(manager.session_file)
            found += [
                session_file,
                session_file.with_name(session_file.name + ".lock"),
                sidecar_path(session_file),
            ]
        return [Path(os.path.realpath(p)) for p in found]

    def _engine(self) -> SessionCheckpoints | None:
        """The current session's engine, or None (off, or skipped: announced once)."""
        if not self.enabled:
            return None
        bound = self._engine_for(self.session.manager)
        if bound.engine is None and not bound.announced:
            bound.announced = True
            self.session.emit(c.CheckpointSkippedEvent(reason=bound.reason or "checkpoints are off"))
        return bound.engine

    def require(self) -> SessionCheckpoints:
        if not self.enabled:
            raise CheckpointError("checkpoints are off (the checkpoints setting or --no-checkpoints)")
        bound = self._engine_for(self.session.manager)
        if bound.engine is None:
            raise CheckpointError(f"this working directory is not checkpointed: {bound.reason}")
        return bound.engine

    # --- taking ----------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def during_run(self) -> AsyncIterator[None]:
        """Snapshots requested inside a run go on in the background; the run ends once they are
        stored."""
        failure: Exception | None = None
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            except Exception as exc:  # the run's own error, not wrapped in a group
                failure = exc
            finally:
                self._group = None
        if failure is not None:
            raise failure

    def entry_appended(self, entry_id: str | None, *, may_change: bool = True) -> None:
        """A user message or a tool result was stored: snapshot in the background (in a run)."""
        if entry_id is None or not may_change or self._group is None or self._engine() is None:
            return
        self._pending += 1
        self._idle = anyio.Event() if self._idle.is_set() else self._idle
        self._group.start_soon(self._take_counted, entry_id)

    async def take_now(self, entry_id: str | None) -> None:
        """Snapshot now for an entry stored outside a run (the user's bash)."""
        if entry_id is None or self._engine() is None:
            return
        await self._take(entry_id)

    async def _take_counted(self, entry_id: str) -> None:
        try:
            await self._take(entry_id)
        finally:
            self._pending -= 1
            if self._pending == 0:
                self._idle.set()

    async def _take(self, entry_id: str) -> None:
        from rpc_agent.checkpoints import TooManyFilesError

        with anyio.CancelScope(shield=True):
            async with self._lock:
                engine = self._engine()
                if engine is None:
                    return
                manager = self.session.manager
                parent = _parent_of(manager, entry_id)
                parent_tree = engine.mapping.state_of(parent, lambda e: _parent_of(manager, e))
                parent_roots = engine.mapping.roots_of(parent, lambda e: _parent_of(manager, e))
                try:
                    snap, changed = await anyio.to_thread.run_sync(
                        engine.take, entry_id, parent_tree, parent_roots
                    )
                except TooManyFilesError as exc:
                    bound = self._bound
                    if bound is not None:
                        bound.engine, bound.reason, bound.announced = None, str(exc), True
                    self.session.emit(c.CheckpointSkippedEvent(reason=str(exc)))
                    return
                except Exception as exc:  # never a failed turn: the client hears of it
                    logger.warning("checkpoint of entry %s failed: %s", entry_id, exc)
                    self.session.emit(
                        c.CheckpointFailedEvent(entryId=entry_id, error=str(exc) or type(exc).__name__)
                    )
                    return
                self.session.emit(
                    c.CheckpointEvent(
                        entryId=entry_id,
                        checkpointId=snap.tree,
                        filesChanged=changed,
                        skipped=[c.SkippedFile(path=s.path, reason=s.reason) for s in snap.skipped],
                    )
                )

    async def barrier(self) -> None:
        """Wait for the snapshots under way: what the next change finds is already stored."""
        while not self._idle.is_set():
            await self._idle.wait()
        async with self._lock:
            pass

    # --- restoring ----------------------------------------------------------------------

    def state_of(self, entry_id: str) -> str:
        """The state of an entry of the current session; NoCheckpointError when it has none."""
        manager = self.session.manager
        manager.require_entry(entry_id)
        engine = self.require()
        tree = engine.mapping.state_of(entry_id, lambda e: _parent_of(manager, e))
        if tree is None:
            raise NoCheckpointError(
                f"entry {entry_id} has no workspace state (it is older than checkpoints here)"
            )
        return tree

    async def restore(self, p: c.RestoreFilesParams) -> c.RestoreFilesResult:
        """``restore_files``: the files back to an entry's state or a checkpoint's."""
        await self.barrier()
        for path in p.paths or ():
            _check_relative(path)
        engine = self.require()
        tree = p.checkpointId
        if tree is None:
            if p.entryId is None:
                raise InvalidRequestError("restore_files needs entryId or checkpointId")
            tree = self.state_of(p.entryId)
        elif not engine.is_kept(tree):
            raise NoCheckpointError(f"no checkpoint {tree} in this session")
        return await self._restore_tree(tree, p.entryId, p.paths, p.dryRun, p.force)

    def _roots_of(self, engine: SessionCheckpoints, tree: str, entry_id: str | None) -> dict[str, str]:
        """The additional folders' states that go with a restore's target."""
        if entry_id is not None:
            manager = self.session.manager
            return engine.mapping.roots_of(entry_id, lambda e: _parent_of(manager, e))
        return dict(engine.mapping.checkpoint_roots.get(tree, {}))

    async def _restore_tree(
        self,
        target: str,
        entry_id: str | None,
        paths: list[str] | None,
        dry_run: bool,
        force: bool,
        known_roots: dict[str, str] | None = None,
    ) -> c.RestoreFilesResult:
        async with self._lock:
            engine = self.require()
            roots = self._roots_of(engine, target, entry_id) if known_roots is None else known_roots
            outcome = await anyio.to_thread.run_sync(
                lambda: engine.restore(target, roots=roots, paths=paths, dry_run=dry_run, force=force)
            )
        result = _result(outcome, dry_run)
        if not dry_run and self.on_restored is not None:
            written = [engine.store.cwd / f.path for f in result.files if f.status != "deleted"]
            await self.on_restored(written)
        if not dry_run:
            self.session.emit(
                c.FilesRestoredEvent(
                    entryId=entry_id,
                    checkpointId=outcome.checkpoint,
                    files=result.files,
                    skipped=result.skipped,
                )
            )
        return result

    async def file_changes(self, entry_id: str, since: str | None) -> c.FileChangesResult:
        await self.barrier()
        manager = self.session.manager
        new = self.state_of(entry_id)
        engine = self.require()
        if since is not None:
            old: str | None = self.state_of(since)
        else:
            parent = _parent_of(manager, entry_id)
            old = engine.mapping.state_of(parent, lambda e: _parent_of(manager, e))
        diffs = await anyio.to_thread.run_sync(engine.file_changes, old, new)
        return c.FileChangesResult(
            entryId=entry_id,
            fromCheckpointId=old,
            toCheckpointId=new,
            files=[
                c.FileDiff(path=d.path, status=d.status, diff=d.diff, binary=d.binary, truncated=d.truncated)
                for d in diffs
            ],
        )

    def files_changed_map(self) -> dict[str, int]:
        """Entry id -> how many files its snapshot changed, for the entries that changed any.

        A session with no engine bound yet and no sidecar file has no snapshots: it is
        answered without binding one, which a ``get_tree`` right after a switch would
        otherwise do for nothing (the workspace store and the folder checks, per session).
        """
        if not self.enabled:
            return {}
        manager = self.session.manager
        bound = self._bound
        if (bound is None or bound.key != self._key(manager)) and not _has_sidecar(manager):
            return {}
        engine = self.current_engine()
        if engine is None:
            return {}
        return {entry: count for entry, count in engine.mapping.files_changed.items() if count}

    # --- moving in the tree with the files -----------------------------------------------

    async def moving(
        self, target_entry: str | None, force: bool, move: Callable[[], Awaitable[Moved]], *, restore: bool
    ) -> Moved:
        """Navigate, fork or clone; with ``restore``, the working directory follows.

        Everything that could refuse the restore (no state, files someone else changed) is
        checked before the move, so a refused restore leaves the conversation where it was.
        A fork or clone gives the new file the states of the entries it copies.
        """
        await self.barrier()
        old_engine = self.current_engine()
        tree: str | None = None
        roots: dict[str, str] = {}
        if restore:
            if target_entry is None:
                raise InvalidRequestError("restoreFiles needs an entry to restore (the session is empty)")
            tree = self.state_of(target_entry)
            roots = self._roots_of(self.require(), tree, target_entry)  # from this file, before it moves
            check = await self._restore_tree(tree, target_entry, None, True, force, roots)
            if check.conflicts and not force:
                raise RestoreConflictError(check.conflicts, check.checkpointId)
        manager_before = id(self.session.manager)
        result = await move()
        if result.cancelled:
            return result
        if id(self.session.manager) != manager_before:
            await self.carry_to(old_engine, self.session.manager)
        if tree is None:
            return result
        restored = await self._restore_tree(tree, target_entry, None, False, force, roots)
        return result.model_copy(update={"restore": restored})

    # --- new session files ----------------------------------------------------------------

    async def carry_to(self, old_engine: SessionCheckpoints | None, new: SessionManager) -> None:
        """Give a forked or cloned session file the states of the entries it copied."""
        if old_engine is None or new.session_id == "" or not self.enabled:
            return
        bound = self._engine_for(new)
        engine = bound.engine
        if engine is None:
            return
        ids = {e["id"] for e in new.entries if isinstance(e.get("id"), str)}
        await anyio.to_thread.run_sync(engine.adopt, old_engine, ids)

    def current_engine(self) -> SessionCheckpoints | None:
        if not self.enabled:
            return None
        return self._engine_for(self.session.manager).engine


def _has_sidecar(manager: SessionManager) -> bool:
    from rpc_agent.checkpoints import sidecar_path

    session_file = manager.session_file
    return session_file is not None and sidecar_path(Path(session_file)).exists()


def _parent_of(manager: SessionManager, entry_id: str) -> str | None:
    entry = manager.get_entry(entry_id)
    parent = entry.get("parentId") if entry is not None else None
    return parent if isinstance(parent, str) else None


def _check_relative(path: str) -> None:
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\0" in path:
        raise InvalidRequestError(f"paths must be relative to the working directory, without '..': {path!r}")


def _result(outcome: RestoreOutcome, dry_run: bool) -> c.RestoreFilesResult:
    from rpc_agent.checkpoints.engine import STATUS_WORDS

    return c.RestoreFilesResult(
        checkpointId=outcome.checkpoint,
        dryRun=dry_run,
        files=[
            c.FileChange(path=ch.path, status=STATUS_WORDS.get(ch.status, "modified"))
            for ch in outcome.changes
        ],
        skipped=[c.SkippedFile(path=s.path, reason=s.reason) for s in outcome.skipped],
        conflicts=outcome.conflicts,
    )
