"""``rpc-agent rewind SESSION ENTRY``: the working directory back to an entry's state.

The session is read without its lock (a running agent may hold it) and never changed; the
sidecar records the restore (its checkpoint first), so ``rpc-agent rewind SESSION --checkpoint
ID`` undoes it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rpc_agent.checkpoints.engine import STATUS_WORDS, Limits, SessionCheckpoints, changes_by_entry
from rpc_agent.checkpoints.mapping import CheckpointMap, sidecar_path
from rpc_agent.checkpoints.store import WorkspaceStore
from rpc_agent.errors import AgentError
from rpc_agent.store import files, guard
from rpc_agent.store.manager import SessionManager
from rpc_agent.store.reading import open_for_command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rpc-agent rewind",
        description="Restore the working directory's files to what they were at an entry of a session.",
    )
    parser.add_argument("session", type=Path, metavar="SESSION.jsonl")
    parser.add_argument("entry", nargs="?", metavar="ENTRY", help="the entry id (8 hex)")
    parser.add_argument("--checkpoint", metavar="ID", help="restore a checkpoint instead (undo a restore)")
    parser.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
    parser.add_argument(
        "--force", action="store_true", help="overwrite files changed since the last checkpoint"
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="only these files (relative to the cwd)")
    return parser


def engine_for_file(source: Path) -> SessionCheckpoints | None:
    """The checkpoints of a session file named by its sidecar, or None (it has none)."""
    mapping = CheckpointMap.load(sidecar_path(source))
    header = mapping.header
    if header is None or not all(isinstance(header.get(k), str) for k in ("repository", "cwd", "session")):
        return None
    home = files.agent_home()
    store = WorkspaceStore(home, Path(header["cwd"]), git_dir=Path(header["repository"]))
    exclude = [
        *guard.store_folders(home, (source.parent,)),
        home / "checkpoints",
        source,
        source.with_name(source.name + ".lock"),
        sidecar_path(source),
    ]
    return SessionCheckpoints(store, mapping, header["session"], exclude=exclude, limits=Limits())


def _parents(manager: SessionManager) -> Callable[[str], str | None]:
    def parent_of(entry_id: str) -> str | None:
        entry = manager.get_entry(entry_id)
        parent = entry.get("parentId") if entry is not None else None
        return parent if isinstance(parent, str) else None

    return parent_of


def export_changes(manager: SessionManager, source: Path) -> dict[str, Any]:
    """For ``rpc-agent export``: the files each entry of a session file changed, with diffs."""
    engine = engine_for_file(source.absolute())
    if engine is None:
        return {}
    return changes_by_entry(engine, _parents(manager))


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    if (args.entry is None) == (args.checkpoint is None):
        print("rpc-agent rewind: give an ENTRY or --checkpoint ID", file=sys.stderr)
        return 2
    source: Path = args.session.expanduser().absolute()
    manager = open_for_command(source, "rewind")
    if manager is None:
        return 1
    engine = engine_for_file(source)
    if engine is None:
        print(f"rpc-agent rewind: {source} has no checkpoints", file=sys.stderr)
        return 1
    mapping = engine.mapping
    parent_of = _parents(manager)

    try:
        if args.checkpoint is not None:
            if not engine.is_kept(args.checkpoint):
                print(f"rpc-agent rewind: no checkpoint {args.checkpoint} in this session", file=sys.stderr)
                return 1
            tree = args.checkpoint
            roots = dict(mapping.checkpoint_roots.get(tree, {}))
        else:
            if manager.get_entry(args.entry) is None:
                print(f"rpc-agent rewind: no entry {args.entry} in {source}", file=sys.stderr)
                return 1
            found = mapping.state_of(args.entry, parent_of)
            if found is None:
                print(f"rpc-agent rewind: entry {args.entry} has no workspace state", file=sys.stderr)
                return 1
            tree = found
            roots = mapping.roots_of(args.entry, parent_of)
        outcome = engine.restore(
            tree, roots=roots, paths=args.paths or None, dry_run=args.dry_run, force=args.force
        )
    except AgentError as exc:
        print(f"rpc-agent rewind: {exc}", file=sys.stderr)
        return 1
    for change in outcome.changes:
        print(f"{STATUS_WORDS.get(change.status, 'modified'):9} {change.path}")
    for skipped in outcome.skipped:
        print(f"skipped   {skipped.path}: {skipped.reason}")
    if args.dry_run:
        for path in outcome.conflicts:
            print(f"conflict  {path}")
    else:
        print(
            f"checkpoint {outcome.checkpoint} (rpc-agent rewind {source} --checkpoint {outcome.checkpoint} undoes this)"
        )
    return 0
