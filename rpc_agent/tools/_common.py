"""Small helpers shared by the tools."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from rpc_agent.session.guard import session_write_refusal, store_folders
from rpc_agent.tools.base import ToolContext, ToolError

ArgsT = TypeVar("ArgsT", bound=BaseModel)

BINARY_SAMPLE_BYTES = 8192


def coerce_args(model: type[ArgsT], args: Any) -> ArgsT:
    """The loop passes validated ``Args``; a plain mapping is validated here too."""
    if isinstance(args, model):
        return args
    return model.model_validate(args)


def display_path(path: Path, cwd: Path) -> str:
    """``path`` relative to the session cwd when it is inside it, else absolute."""
    try:
        rel = path.relative_to(cwd)
    except ValueError:
        return str(path)
    text = rel.as_posix()
    return text if text != "." else "."


def looks_binary(sample: bytes) -> bool:
    """A NUL byte, or mostly control bytes, in the first few KB."""
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    text_bytes = {7, 8, 9, 10, 12, 13, 27, *range(0x20, 0x7F), *range(0x80, 0x100)}
    odd = sum(1 for byte in sample if byte not in text_bytes)
    return odd / len(sample) > 0.3


def refuse_session_files(path: Path, ctx: ToolContext) -> None:
    """A tool error for a write aimed at a session file (see ``session_write_refusal``).

    A session file is written only by its session's append chain; a tool that replaced one
    would leave the session appending to a file nobody reads, or fork another process's.
    """
    folders = ctx.session_folders if ctx.session_folders is not None else store_folders()
    reason = session_write_refusal(path, live=ctx.session_file, folders=folders)
    if reason is not None:
        raise ToolError(
            f"Refusing to write {path}: {reason}. Session files are written only by their session."
        )


def require_exists(path: Path) -> os.stat_result:
    try:
        return path.stat()
    except FileNotFoundError:
        raise ToolError(f"Path not found: {path}") from None
    except NotADirectoryError:
        raise ToolError(f"Path not found (a parent is not a directory): {path}") from None
    except PermissionError:
        raise ToolError(f"Permission denied: {path}") from None


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step (temp file in the same folder, then rename).

    A symlink is followed, so the link stays and its target changes; an existing file keeps
    its permission bits, a new one gets the usual ``0o666 & ~umask``.
    """
    target = path.resolve() if path.is_symlink() else path
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
