"""``rpc-agent login`` and ``rpc-agent logout``: keep or forget the Anthropic API key.

``login`` is what an editor's ACP ``terminal`` auth method runs (the editor appends ``login`` to
the command line it starts the agent with, so ``rpc-agent --acp login`` logs in too): it asks
for the key without echo on a terminal, or reads one line from stdin when that is not a
terminal (``echo $KEY | rpc-agent login`` in a script), and exits 0 only once the key is
stored. ACP reads the exit status alone, so every failure exits non-zero with its reason on
stderr.
"""

from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path
from typing import TextIO

from rpc_agent.credentials import CredentialsError, CredentialStore, check_key

PROVIDER = "anthropic"
PROMPT = "Anthropic API key (typing is hidden; create one at https://console.anthropic.com/settings/keys): "


def _read_key(stdin: TextIO, stderr: TextIO) -> str:
    if stdin.isatty():
        return getpass.getpass(PROMPT, stream=stderr)
    return stdin.readline()


def login(home: Path, stdin: TextIO = sys.stdin, stderr: TextIO = sys.stderr) -> int:
    store = CredentialStore(home)
    try:
        key = check_key(_read_key(stdin, stderr))
        store.store(PROVIDER, key)
    except (EOFError, ValueError, CredentialsError) as exc:
        reason = "no key was given" if isinstance(exc, EOFError) else str(exc)
        print(f"rpc-agent: not logged in: {reason}", file=stderr)
        return 1
    except KeyboardInterrupt:
        print("\nrpc-agent: not logged in", file=stderr)
        return 130
    print(f"rpc-agent: logged in; the key is kept in {store.path} (mode 0600)", file=stderr)
    if os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"):
        print(
            "rpc-agent: note: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN is set here and is used first",
            file=stderr,
        )
    return 0


def logout(home: Path, stderr: TextIO = sys.stderr) -> int:
    store = CredentialStore(home)
    try:
        removed = store.remove(PROVIDER)
    except CredentialsError as exc:
        print(f"rpc-agent: {exc}", file=stderr)
        return 1
    print("rpc-agent: logged out" if removed else "rpc-agent: no stored key to remove", file=stderr)
    return 0
