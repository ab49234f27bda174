"""Letting go of a big session a slice at a time, with a pause between slices.

Freeing 100,000 items at once is one long C call that holds the GIL, and a thread that never
sleeps makes the others wait for it; in slices, with the pause the caller gives (the server's
``Background.pause``), the requests being served go first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FREE_SLICE = 2000
"""Objects freed between two pauses."""


def free_dict(container: dict[Any, Any], pause: Callable[[], None]) -> None:
    """Empty a dict one item at a time, pausing every ``FREE_SLICE`` items."""
    for n in range(len(container)):
        if n % FREE_SLICE == 0:
            pause()
        container.popitem()


def free_list(items: list[Any], pause: Callable[[], None]) -> None:
    """Empty a list from its end, ``FREE_SLICE`` items at a time."""
    while items:
        del items[-FREE_SLICE:]
        pause()
