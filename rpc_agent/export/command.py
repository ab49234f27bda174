"""``rpc-agent export SESSION.jsonl [-o OUT.html]``: the HTML export from the command line.

The session is opened read-only (no lock, nothing repaired or migrated on disk), so a session
that a running agent holds can be exported while it works.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rpc_agent.export.html import FileChanges, page_data, write_page
from rpc_agent.store import files
from rpc_agent.store.manager import SessionManager
from rpc_agent.store.reading import open_for_command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rpc-agent export",
        description="Write a session (its whole tree) as one self-contained HTML page and print its path.",
    )
    parser.add_argument("session", type=Path, metavar="SESSION.jsonl", help="the session file to export")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="OUT.html",
        help="where to write the page (default: the session file's name with .html, in the current directory)",
    )
    return parser


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.absolute() == b.absolute()


def main(
    argv: Sequence[str], file_changes: Callable[[SessionManager, Path], FileChanges] | None = None
) -> int:
    """``file_changes``: the files each entry's checkpoint changed (the checkpoints sit beside
    this layer, so the command line hands it in)."""
    args = build_parser().parse_args(argv)
    source: Path = args.session
    target: Path = (args.output or Path.cwd() / source.with_suffix(".html").name).expanduser()
    if _same_file(source, target):
        print(f"rpc-agent export: refusing to overwrite the session file itself: {target}", file=sys.stderr)
        return 2
    if target.is_file() and files.read_header(target) is not None:
        print(f"rpc-agent export: refusing to overwrite a session file: {target}", file=sys.stderr)
        return 2
    manager = open_for_command(source, "export")
    if manager is None:
        return 1
    try:
        changed = file_changes(manager, source) if file_changes is not None else None
        write_page(page_data(manager, changed), target)
    except OSError as exc:
        print(f"rpc-agent export: cannot write {target}: {exc}", file=sys.stderr)
        return 1
    print(target)
    return 0
