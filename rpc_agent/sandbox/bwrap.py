"""A sandbox policy as a bubblewrap command line, and whether bubblewrap works here.

bubblewrap (Debian's ``bubblewrap``) was chosen over Landlock because a mount namespace can
hide a folder inside a readable one (``~/.ssh`` in a readable home, ``$RPC_AGENT_HOME``) and
can mount the root read-only, ``/proc/self/root`` included; Landlock can only grant access to
whole trees. The README's "Sandbox" section has the measured cost of both.

The command runs in a PID namespace of its own (``--unshare-pid``): bubblewrap's init is its
PID 1, and when that init ends, the kernel kills every process left in the namespace, one that
made a session of its own (``setsid``) included. bubblewrap stays in the command's process
group (no ``--new-session``: the tool already runs it in a new session, with no terminal), so
killing the group kills bubblewrap, and ``--die-with-parent`` takes its init with it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from rpc_agent.sandbox.policy import Sandbox

_CHECKED: dict[str, str | None] = {}


def unavailable_reason() -> str | None:
    """Why bubblewrap cannot sandbox commands here (not installed, no user namespaces), or None.

    Checked once per process by running a sandbox like the real ones around ``true``.
    """
    if "bwrap" in _CHECKED:
        return _CHECKED["bwrap"]
    binary = shutil.which("bwrap")
    if binary is None:
        reason: str | None = "bubblewrap (bwrap) is not installed; on Debian: apt-get install bubblewrap"
    else:
        true = shutil.which("true") or "/bin/true"
        argv = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        argv += ["--unshare-pid", "--unshare-net", "--die-with-parent", "--", true]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            reason = f"bubblewrap could not start: {exc}"
        else:
            message = done.stderr.decode(errors="replace").strip()
            reason = (
                None
                if done.returncode == 0
                else f"bubblewrap cannot make a sandbox here ({message or f'exit code {done.returncode}'}); "
                "unprivileged user namespaces may be turned off (sysctl kernel.unprivileged_userns_clone)"
            )
    _CHECKED["bwrap"] = reason
    return reason


def _hide(path: Path, remounts: list[str]) -> list[str]:
    if path.is_dir():
        remounts += ["--remount-ro", str(path)]
        return ["--tmpfs", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


def command(sandbox: Sandbox, argv: Sequence[str], cwd: Path) -> list[str]:
    """``argv`` wrapped so that it runs in ``sandbox``, in ``cwd``."""
    binary = shutil.which("bwrap") or "bwrap"
    out = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    out += ["--unshare-pid", "--die-with-parent"]
    if sandbox.policy.network == "deny":
        out.append("--unshare-net")
    writable = (sandbox.temp_dir, *sandbox.write_roots)
    remounts: list[str] = []

    def within_writable(path: Path) -> bool:
        return any(path != root and root in path.parents for root in writable)

    # Hidden paths first, then the writable folders over them (a working directory inside
    # $RPC_AGENT_HOME is still there), then the hidden paths that lie inside a writable folder
    # (~/.ssh of a home that is the working directory) once more. The empty folders that hide
    # are made read-only last: until then, bubblewrap makes the mount points it needs in them.
    for path in sandbox.hidden:
        if not within_writable(path):
            out += _hide(path, remounts)
    for root in writable:
        out += ["--bind", str(root), str(root)]
    for path in sandbox.hidden:
        if within_writable(path):
            out += _hide(path, remounts)
    out += remounts
    out += ["--chdir", str(cwd), "--", *argv]
    return out


def environment(sandbox: Sandbox, env: dict[str, str]) -> dict[str, str]:
    """The command's environment: its temp folder is the only one it may write in read-only."""
    folder = str(sandbox.temp_dir)
    os.makedirs(folder, exist_ok=True)
    return {**env, "TMPDIR": folder, "TMP": folder, "TEMP": folder}
