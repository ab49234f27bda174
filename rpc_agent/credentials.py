"""The API key ``rpc-agent login`` keeps, used when the environment holds none.

An editor starts the agent with the environment it has, which rarely holds an API key; ACP's
answer is a ``terminal`` login: the editor runs ``rpc-agent login`` in a terminal, the user
types the key there, and every later start (the JSON-RPC front, ``-p`` and ``--acp`` alike)
finds it in ``$RPC_AGENT_HOME/auth.json``. The file is the user's secret: created with mode
0600 (never readable by others, even for a moment: the temporary file is made with that mode
before the key is written into it) and replaced atomically, so a reader sees the old file or
the new one. ``{"anthropic": {"type": "api_key", "key": "..."}}``: one entry per provider, as
pi keeps its own ``auth.json``.

The file is read on each use, not cached: a ``logout`` from an editor (or another process)
takes effect at the next model call of every session.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rpc_agent.fileio import write_all

AUTH_FILE = "auth.json"
FILE_MODE = 0o600


class CredentialsError(Exception):
    """The key cannot be stored or removed (an unwritable home, say)."""


def check_key(text: str) -> str:
    """The key as typed, without surrounding blanks; ValueError when it cannot be a key."""
    key = text.strip()
    if not key:
        raise ValueError("the API key is empty")
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in key):
        raise ValueError("the API key holds spaces or control characters")
    return key


@dataclass(frozen=True, slots=True)
class CredentialStore:
    """``auth.json`` in one agent home."""

    home: Path

    @property
    def path(self) -> Path:
        return self.home / AUTH_FILE

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}  # missing, unreadable or damaged: no stored key (login writes a new one)
        return data if isinstance(data, dict) else {}

    def api_key(self, provider: str) -> str | None:
        entry = self._read().get(provider)
        if isinstance(entry, dict) and entry.get("type") == "api_key":
            key = entry.get("key")
            if isinstance(key, str) and key:
                return key
        return None

    def store(self, provider: str, key: str) -> None:
        data = self._read()
        data[provider] = {"type": "api_key", "key": check_key(key)}
        self._write(data)

    def remove(self, provider: str) -> bool:
        """Forget the provider's key; False when there was none."""
        data = self._read()
        if provider not in data:
            return False
        del data[provider]
        if data:
            self._write(data)
        else:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise CredentialsError(f"cannot remove {self.path}: {exc.strerror}") from exc
        return True

    def _write(self, data: dict[str, Any]) -> None:
        payload = (json.dumps(data, indent=2) + "\n").encode()
        tmp = self.path.with_name(f".{AUTH_FILE}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        except OSError as exc:
            raise CredentialsError(f"cannot write {self.path}: {exc.strerror}") from exc
        try:
            try:
                os.fchmod(fd, FILE_MODE)  # the umask only takes bits away; this says it plainly
                write_all(fd, payload)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise CredentialsError(f"cannot write {self.path}: {exc.strerror}") from exc
