"""Which folders a session's checkpoints cover: the working directory and the additional
directories, never the root or home folder (a snapshot of either would read the whole disk or
the user's every file), and no folder twice."""

from __future__ import annotations

import os
from pathlib import Path


def skip_reason(cwd: Path, max_files: int) -> str | None:
    """Why a folder is never checkpointed (before looking at its files), or None."""
    real = Path(os.path.realpath(cwd))
    if real == Path(real.anchor):
        return f"{cwd} is the root folder"
    home = os.environ.get("HOME")
    if home and real == Path(os.path.realpath(home)):
        return f"{cwd} is the home folder"
    if max_files <= 0:
        return "the file limit (maxFiles) is 0"
    return None


def extra_roots(cwd: Path, folders: tuple[str, ...], max_files: int) -> list[Path]:
    """The additional folders a snapshot covers besides ``cwd``: not one inside it or around it
    (its files would be stored, and restored, twice), nor the home or root folder."""
    roots: list[Path] = []
    for folder in folders:
        real = Path(os.path.realpath(folder))
        if real == cwd or cwd in real.parents or real in cwd.parents or real in roots:
            continue
        if skip_reason(real, max_files) is None and real.is_dir():
            roots.append(real)
    return roots
