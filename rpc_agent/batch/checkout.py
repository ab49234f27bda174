"""A task's ``{repo, ref}``: the ref checked out into a fresh folder, the repository untouched.

Not ``git worktree add``: that writes into the repository's own ``.git/worktrees`` (and its
``gc`` then has to know about ours). A clone with ``--no-checkout`` into the task's folder,
``--shared`` when the repository is a local folder (its objects are read in place through
``alternates``, nothing is copied), then a detached checkout of the commit the ref names,
leaves the repository exactly as it was: git only reads it. The folder goes when the task
ends, unless the batch keeps it (``--keep-checkouts``), for the agent's changes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_TIMEOUT = 600.0
"""Seconds a clone may take (a URL's whole history comes over the network)."""


class CheckoutError(Exception):
    """The ref could not be checked out; the message is the task's failure reason."""


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # Never wait for a password on a terminal nobody watches.
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=GIT_TIMEOUT,
        check=False,
    )


def _said(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in (done.stderr or done.stdout).strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"git exited with code {done.returncode}"


def check_out(repo: str, ref: str, into: Path) -> str:
    """Check ``ref`` of ``repo`` out into the new folder ``into``; the commit's id.

    Raises CheckoutError with the reason (no such repository, no such ref)."""
    local = Path(repo).is_dir()
    if not local and "://" not in repo and ":" not in repo:
        raise CheckoutError(f"no repository at {repo}")
    shared = ["--shared"] if local else []
    clone = _git("clone", "--quiet", "--no-checkout", *shared, "--", repo, str(into))
    if clone.returncode != 0:
        raise CheckoutError(f"cannot clone {repo}: {_said(clone)}")
    commit = None
    for name in (ref, f"origin/{ref}"):  # a commit, tag or the default branch; other branches
        found = _git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}", cwd=into)
        if found.returncode == 0:
            commit = found.stdout.strip()
            break
    if commit is None:
        raise CheckoutError(f"ref {ref!r} not found in {repo}")
    checkout = _git("checkout", "--quiet", "--detach", commit, cwd=into)
    if checkout.returncode != 0:
        raise CheckoutError(f"cannot check out {ref!r} of {repo}: {_said(checkout)}")
    return commit
