"""Sandbox modes, how the settings that name them combine, and what a mode allows.

``off`` runs commands with the user's rights (the default). ``read-only`` lets them read what
the user can, except the hidden credentials, and write only a temp folder of their own.
``workspace-write`` also lets them write the working directory and the session's additional
directories. ``network: deny`` gives them a network namespace of their own, with nothing but
its own loopback. Whatever the mode, the hidden paths (``$RPC_AGENT_HOME`` and, unless turned
off, the usual credential files) are empty to them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rpc_agent.errors import SettingsError

Mode = Literal["off", "read-only", "workspace-write"]
Network = Literal["allow", "deny"]

MODES: tuple[Mode, ...] = ("off", "read-only", "workspace-write")
"""From the loosest to the tightest is ``off`` > ``workspace-write`` > ``read-only``."""
NETWORKS: tuple[Network, ...] = ("allow", "deny")

_STRICTNESS: dict[str, int] = {"off": 0, "workspace-write": 1, "read-only": 2}

CREDENTIAL_PATHS: tuple[str, ...] = ("~/.ssh", "~/.aws", "~/.config/gcloud", "~/.netrc")
"""Hidden from sandboxed commands unless ``hideCredentials`` is false (relative to HOME)."""


class SandboxUnavailableError(SettingsError):
    """A sandbox mode was asked for and the mechanism cannot run here (with the reason)."""


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    mode: Mode = "off"
    network: Network = "allow"
    hide_credentials: bool = True
    explicit: bool = False
    """Asked for by a flag, a settings file or the client: failing to provide it is an error,
    never a silent run without it."""

    @property
    def active(self) -> bool:
        return self.mode != "off"

    def describe(self) -> str:
        """The mode in the words a tool result uses."""
        return f"sandbox {self.mode}, network {self.network}"


def tighter(base: SandboxPolicy, mode: str | None, network: str | None) -> SandboxPolicy:
    """``base`` tightened by a project's settings: a stricter mode or ``deny`` is taken, a looser
    one is ignored (a repository must not lift what the user set)."""
    new_mode = base.mode
    if mode is not None and _STRICTNESS[mode] > _STRICTNESS[base.mode]:
        new_mode = mode  # type: ignore[assignment]
    new_network: Network = "deny" if network == "deny" else base.network
    explicit = base.explicit or new_mode != base.mode or new_network != base.network
    return SandboxPolicy(new_mode, new_network, base.hide_credentials, explicit)


def chosen(
    mode: str | None, network: str | None, base: SandboxPolicy, *, hide_credentials: bool | None = None
) -> SandboxPolicy:
    """``base`` with what a flag or the client names (each may loosen: they speak for the user).

    A sandbox mode without a network choice denies the network, as Codex's workspace-write
    does: a command that may not write outside the tree should not send it away either.
    """
    if mode is not None and mode not in MODES:
        raise SettingsError(f"unknown sandbox mode {mode!r}; use one of {', '.join(MODES)}")
    if network is not None and network not in NETWORKS:
        raise SettingsError(f"unknown sandbox network {network!r}; use allow or deny")
    new_mode: Mode = mode if mode is not None else base.mode
    new_network: Network = network if network is not None else base.network
    if network is None and mode is not None and mode != "off" and base.mode == "off":
        new_network = "deny"
    return SandboxPolicy(
        new_mode,
        new_network,
        base.hide_credentials if hide_credentials is None else hide_credentials,
        base.explicit or mode is not None or network is not None,
    )


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass(frozen=True, slots=True)
class Sandbox:
    """One policy applied to one session's folders: what commands may write, what they do
    not see. Paths are resolved (symlinks followed) when it is made."""

    policy: SandboxPolicy
    write_roots: tuple[Path, ...]
    """Writable besides the temp folder (workspace-write: the cwd and additional directories)."""
    hidden: tuple[Path, ...]
    """Existing paths that sandboxed commands see empty."""
    temp_dir: Path
    """The commands' own temp folder (TMPDIR), writable in every mode."""

    @classmethod
    def build(
        cls,
        policy: SandboxPolicy,
        *,
        cwd: Path,
        additional: tuple[Path, ...] = (),
        agent_home: Path,
        home: Path | None,
        temp_dir: Path,
    ) -> Sandbox:
        roots = (cwd, *additional) if policy.mode == "workspace-write" else ()
        hidden_paths = [agent_home]
        if policy.hide_credentials and home is not None:
            hidden_paths += [home / p.removeprefix("~/") for p in CREDENTIAL_PATHS]
        hidden = tuple(dict.fromkeys(_real(p) for p in hidden_paths if os.path.lexists(p)))
        return cls(policy, tuple(dict.fromkeys(_real(r) for r in roots)), hidden, _real(temp_dir))

    def write_refusal(self, path: Path) -> str | None:
        """Why a file tool may not write ``path`` under this sandbox, or None.

        The path is resolved as the write would follow it (a symlink inside the tree that points
        out of it is judged by where it points); a file that does not exist yet by its folder.
        """
        if not self.policy.active:
            return None
        target = _real(path)
        if any(_inside(target, hidden) for hidden in self.hidden):
            return f"{target} is hidden by the sandbox ({self.policy.describe()})"
        if _inside(target, self.temp_dir):
            return None
        if any(_inside(target, root) for root in self.write_roots):
            return None
        if self.policy.mode == "read-only":
            return f"the sandbox is read-only ({self.policy.describe()}): nothing outside its temp folder may be written"
        where = ", ".join(str(root) for root in self.write_roots)
        return (
            f"{target} is outside the folders the sandbox lets commands write ({where}; "
            f"{self.policy.describe()})"
        )

    def read_refusal(self, path: Path) -> str | None:
        """Why a file tool may not read ``path`` (it is hidden), or None."""
        if not self.policy.active:
            return None
        target = _real(path)
        if any(_inside(target, hidden) for hidden in self.hidden):
            return f"{target} is hidden by the sandbox ({self.policy.describe()})"
        return None
