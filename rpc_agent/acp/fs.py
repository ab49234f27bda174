"""The file tools' FileAccess over ACP: the editor's buffers, when the client offers them.

With ``fs.readTextFile`` the model reads what the user sees, unsaved changes included; with
``fs.writeTextFile`` its writes land in the editor (which saves them and can show them). A
capability the client did not advertise falls back to the disk.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from acp.interfaces import Client
from acp.schema import ClientCapabilities

from acp import RequestError
from rpc_agent.tools.access import DiskFiles
from rpc_agent.tools.base import FileAccess, ToolError


def _reason(exc: Exception) -> str:
    data = exc.data if isinstance(exc, RequestError) else None
    details = data.get("details") if isinstance(data, dict) else None
    return f"{exc}" + (f": {details}" if isinstance(details, str) and details not in str(exc) else "")


class EditorFiles:
    def __init__(self, client: Callable[[], Client], session_id: str, *, read: bool, write: bool) -> None:
        self._client = client
        self._session_id = session_id
        self._read = read
        self._write = write
        self._disk = DiskFiles()

    async def read_text(self, path: Path) -> str:
        if not self._read:
            return await self._disk.read_text(path)
        try:
            response = await self._client().read_text_file(session_id=self._session_id, path=str(path))
        except (RequestError, ConnectionError) as exc:
            raise ToolError(f"The editor could not read {path}: {_reason(exc)}") from None
        return response.content

    async def write_text(self, path: Path, text: str) -> None:
        if not self._write:
            await self._disk.write_text(path, text)
            return
        try:
            await self._client().write_text_file(session_id=self._session_id, path=str(path), content=text)
        except (RequestError, ConnectionError) as exc:
            raise ToolError(f"The editor could not write {path}: {_reason(exc)}") from None


def restored_to_editor(
    capabilities: ClientCapabilities, client: Callable[[], Client], session_id: str
) -> Callable[[list[Path]], Awaitable[None]] | None:
    """With ``fs.writeTextFile``, files a restore wrote are handed to the editor as well, so
    its open buffers show the restored text instead of the text it would save back."""
    if not (capabilities.fs and capabilities.fs.write_text_file):
        return None

    async def write_through(paths: list[Path]) -> None:
        for path in paths:
            if path.is_symlink() or not path.is_file():
                continue
            try:
                text = path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue  # binary or gone: the disk has it, no buffer could show it
            try:
                await client().write_text_file(session_id=session_id, path=str(path), content=text)
            except (RequestError, ConnectionError):
                continue  # the disk is restored; an editor that refuses keeps its buffer

    return write_through


def file_access(
    capabilities: ClientCapabilities, client: Callable[[], Client], session_id: str
) -> FileAccess | None:
    """The editor's buffers for what the client offers; None when it offers neither."""
    fs = capabilities.fs
    read = bool(fs and fs.read_text_file)
    write = bool(fs and fs.write_text_file)
    if not (read or write):
        return None
    return EditorFiles(client, session_id, read=read, write=write)
