"""Small helpers shared by the tools."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field

from rpc_agent.store.guard import session_write_refusal, store_folders
from rpc_agent.tools import sandboxed
from rpc_agent.tools.base import FileAccess, ToolContext, ToolError, ToolOutput

ArgsT = TypeVar("ArgsT", bound=BaseModel)

BINARY_SAMPLE_BYTES = 8192


class ToolArgs(BaseModel):
    """A built-in tool's arguments: one the model made up is refused with a validation error it
    can act on, not dropped without a word."""

    model_config = ConfigDict(extra="forbid")


def limit_field(default: int, what: str) -> Any:
    """The ``limit`` argument of a tool that lists things: at least one, ``default`` if not given."""
    return Field(default=default, ge=1, description=f"Maximum number of {what}. Default: {default}.")


class BuiltinTool(Generic[ArgsT]):
    """A built-in tool, written as ``class ReadTool(BuiltinTool[ReadArgs])`` with its name,
    description and ``run``: the arguments model is named once, in the class header.

    The loop passes ``Args`` already validated; a plain mapping (a direct caller's) is
    validated here, so ``run`` always gets the model.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]]
    read_only: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in cls.__dict__.get("__orig_bases__", ()):
            if get_origin(base) is BuiltinTool:
                (cls.Args,) = get_args(base)

    async def execute(self, args: Any, ctx: ToolContext) -> ToolOutput:
        params = args if isinstance(args, self.Args) else self.Args.model_validate(args)
        return await self.run(cast(ArgsT, params), ctx)

    async def run(self, params: ArgsT, ctx: ToolContext) -> ToolOutput:
        raise NotImplementedError


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


def check_writable(path: Path, ctx: ToolContext) -> None:
    """A tool error for a file tool's write of a session file, or of a path the sandbox would
    refuse a command; blocking (it looks at the disk)."""
    refuse_session_files(path, ctx)
    sandboxed.check_write(path, ctx)


def _in_words(exc: OSError, path: Path, words: dict[type[OSError], str]) -> Exception:
    """The tool error that says ``exc`` in the words given for its kind (``{path}`` filled in),
    or ``exc`` itself when no kind matches."""
    for kind, text in words.items():
        if isinstance(exc, kind):
            return ToolError(text.format(path=path))
    return exc


_STAT_WORDS: dict[type[OSError], str] = {
    FileNotFoundError: "Path not found: {path}",
    NotADirectoryError: "Path not found (a parent is not a directory): {path}",
    PermissionError: "Permission denied: {path}",
}

_WRITE_WORDS: dict[type[OSError], str] = {
    FileExistsError: "Cannot create the folder for {path}: a parent path is a file.",
    NotADirectoryError: "Cannot write {path}: a parent path is a file, not a folder.",
    PermissionError: "Permission denied writing {path}",
}


def require_exists(path: Path) -> os.stat_result:
    try:
        return path.stat()
    except OSError as exc:
        raise _in_words(exc, path, _STAT_WORDS) from None


def require_dir(path: Path, otherwise: str) -> None:
    """A tool error unless ``path`` is a directory; ``otherwise`` follows "is not a directory"
    and says what to do instead."""
    require_exists(path)
    if not path.is_dir():
        raise ToolError(f"{path} is not a directory{otherwise}")


def require_file(path: Path, *, directory: str, other: str) -> os.stat_result:
    """``path``'s stat when it is a regular file; else a tool error, its text ending with
    ``directory`` (for a directory) or ``other`` (a device, FIFO or socket)."""
    info = require_exists(path)
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"{path} is a directory, not a file{directory}")
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{path} is not a regular file{other}")
    return info


async def write_file(files: FileAccess, path: Path, text: str) -> None:
    """Write ``text`` through ``files``; a failure becomes a tool error the model can act on."""
    try:
        await files.write_text(path, text)
    except OSError as exc:
        error = _in_words(exc, path, _WRITE_WORDS)
        if error is exc:
            error = ToolError(f"Could not write {path}: {exc.strerror or exc}")
        raise error from None
