"""This Python in a child process: for what a test must not do in its own interpreter (see a
fresh ``sys.modules``, risk a hang or a run-away, hold a lock as another pid would); and any
other program run as a child whose output a test reads (pi's scripts under node)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


def run_child(
    argv: Sequence[str | Path],
    *,
    timeout: float,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``argv`` run to its end (``env`` None: this environment); its output as text, its exit
    code left for the test to judge."""
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def run_python(code: str, *args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -c code args...`` with this environment (see :func:`run_child`)."""
    return run_child([sys.executable, "-c", code, *args], timeout=timeout)


def modules_loaded_by(statement: str) -> list[str]:
    """The modules a fresh interpreter holds once it has run ``statement`` (an import)."""
    done = run_python(f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))")
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout)
    return loaded
