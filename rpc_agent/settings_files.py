"""Reading the JSON settings files that stack (the user's, then the project's).

The agent's settings and the MCP servers are read from overlapping lists of files with the
same rules: a missing file is skipped, since every one of them is optional; an unreadable or
invalid one stops the load with the file named, since a half-applied configuration would run
the agent in a way nobody asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from rpc_agent.errors import SettingsError
from rpc_agent.validation import describe

T = TypeVar("T")


def read_each(
    paths: Sequence[Path],
    parse: Callable[[bytes], T],
    *,
    error: type[SettingsError],
    unreadable: str,
    invalid: str,
) -> Iterator[tuple[int, T]]:
    """Each existing file parsed, with its position in ``paths``, lowest precedence first.

    ``unreadable`` and ``invalid`` start the error's message (``{path}`` is the file); the
    reason follows after a colon.
    """
    for position, path in enumerate(paths):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise error(f"{unreadable.format(path=path)}: {exc}") from exc
        try:
            parsed = parse(data)
        except ValueError as exc:
            detail = describe(exc) if isinstance(exc, ValidationError) else str(exc)
            raise error(f"{invalid.format(path=path)}: {detail}") from None
        yield position, parsed
