"""This Python in a child process: for what a test must not do in its own interpreter (see a
fresh ``sys.modules``, risk a hang or a run-away, hold a lock as another pid would)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run_python(code: str, *args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -c code args...`` with this environment; its output as text, its exit code
    left for the test to judge."""
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def modules_loaded_by(statement: str) -> list[str]:
    """The modules a fresh interpreter holds once it has run ``statement`` (an import)."""
    done = run_python(f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))")
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout)
    return loaded
