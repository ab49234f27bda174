"""What a command that the sandbox refused gets told, so that the model can explain or ask.

The kernel says no with an errno (EROFS for a write to the read-only root or to a hidden file,
ENETUNREACH or ECONNREFUSED behind ``--unshare-net``), and a hidden folder is simply empty;
the command prints that in its own words. A plain "Permission denied" is left alone: the
sandbox does not cause it (file modes do), and a note would send the model the wrong way. The output is searched for those words, and the note names the path or the
host when the message does, and the mode in force.
"""

from __future__ import annotations

import re

from rpc_agent.sandbox.policy import Sandbox

_WRITE_WORDS = ("Read-only file system", "Errno 30")
_NETWORK_WORDS = (
    "Network is unreachable",
    "Connection refused",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
    "Failed to connect to",
)

_QUOTED_PATH = re.compile(r"['\u2018\"`](/[^'\u2019\"`\n]*)['\u2019\"`]")
_BARE_PATH = re.compile(r"(?:^|\s)([^\s:'\"]+):\s*Read-only")
_HOST = re.compile(
    r"(?:Could not resolve host:?|Failed to connect to|resolve|host)\s+['\"]?([A-Za-z0-9_.:\-\[\]]+)"
)


def _first_path(lines: list[str]) -> str | None:
    for line in lines:
        match = _BARE_PATH.search(line) or _QUOTED_PATH.search(line)
        if match:
            return match.group(1)
    return None


def explain(output: str, sandbox: Sandbox) -> str | None:
    """The note for a command's output when the sandbox shows in it (one line for each kind
    of refusal found), else None."""
    if not sandbox.policy.active:
        return None
    lines = output.splitlines()
    mode = sandbox.policy.describe()
    notes: list[str] = []
    writes = [line for line in lines if any(word in line for word in _WRITE_WORDS)]
    if writes:
        path = _first_path(writes)
        where = f"writing {path}" if path else "a write"
        allowed = ", ".join(str(p) for p in (*sandbox.write_roots, sandbox.temp_dir))
        notes.append(f"[Sandbox: {where} was refused ({mode}); commands may write only in {allowed}.]")
    named = [str(p) for p in sandbox.hidden if str(p) in output]
    if named:
        notes.append(
            f"[Sandbox: {named[0]} is hidden from sandboxed commands ({mode}); it looks empty or "
            "missing to them. It holds credentials: ask the user instead.]"
        )
    if sandbox.policy.network == "deny":
        network = [line for line in lines if any(word in line for word in _NETWORK_WORDS)]
        if network:
            match = next((m for line in network if (m := _HOST.search(line))), None)
            host = f" to {match.group(1)}" if match else ""
            notes.append(
                f"[Sandbox: the network connection{host} was refused ({mode}): sandboxed commands "
                "have no network.]"
            )
    if not notes:
        return None
    notes.append("[Tell the user what the sandbox refused, or ask them to let the command run outside it.]")
    return "\n".join(notes)
