"""Runs mypy, as strict as the project's own check, on a snippet: a test of a typed shape shows
that a mistake in code using it is rejected, which no run-time assertion can show."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def mypy_errors(folder: Path, name: str, source: str) -> list[str]:
    """The ``error:`` lines mypy gives for ``source`` saved as ``folder/name`` (it must fail).

    ``folder`` is a test's ``tmp_path``: the incremental cache sits beside it, in the base folder
    this process's tests share, so a later snippet's run reuses what an earlier one found out
    about the package and its dependencies instead of analysing them again; a new run of the
    suite starts with an empty cache.

    mypy runs as its command, in a process of its own: run in this one (``mypy.api``), it leaves
    its whole analysis in memory, and this process's exit at the end of the suite took over a
    second longer to free it; the command leaves without freeing (its ``--fast-exit``)."""
    path = folder / name
    path.write_text(source)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            str(path),
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(folder.parent / "mypy-cache"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    return [line for line in run.stdout.splitlines() if ": error:" in line]
