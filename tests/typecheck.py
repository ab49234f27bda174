"""Runs mypy, as strict as the project's own check, on a snippet: a test of a typed shape shows
that a mistake in code using it is rejected, which no run-time assertion can show."""

from __future__ import annotations

from pathlib import Path


def mypy_errors(folder: Path, name: str, source: str) -> list[str]:
    """The ``error:`` lines mypy gives for ``source`` saved as ``folder/name`` (it must fail)."""
    from mypy import api

    path = folder / name
    path.write_text(source)
    out, _err, status = api.run(
        [
            str(path),
            "--strict",
            "--no-incremental",
            "--follow-imports=silent",
            "--cache-dir",
            str(folder / "cache"),
        ]
    )
    assert status == 1, out
    return [line for line in out.splitlines() if ": error:" in line]
