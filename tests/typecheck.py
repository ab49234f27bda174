"""Runs mypy, as strict as the project's own check, on a snippet: a test of a typed shape shows
that a mistake in code using it is rejected, which no run-time assertion can show."""

from __future__ import annotations

from pathlib import Path


def mypy_errors(folder: Path, name: str, source: str) -> list[str]:
    """The ``error:`` lines mypy gives for ``source`` saved as ``folder/name`` (it must fail).

    ``folder`` is a test's ``tmp_path``: the incremental cache sits beside it, in the base folder
    this process's tests share, so a later snippet's run reuses what an earlier one found out
    about the package and its dependencies instead of analysing them again; a new run of the
    suite starts with an empty cache."""
    from mypy import api

    path = folder / name
    path.write_text(source)
    out, _err, status = api.run(
        [
            str(path),
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(folder.parent / "mypy-cache"),
        ]
    )
    assert status == 1, out
    return [line for line in out.splitlines() if ": error:" in line]
