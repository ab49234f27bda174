"""Child ids grouped by parent, held where the cyclic collector does not walk them.

A session keeps one group per parent in its index, and the tree keeps one per visible parent.
Most parents have one child, so the groups are two dicts: ``single``, a parent's only child
(ids to ids: a dict of strings is untracked, so the collector never visits it), and
``several``, the list of children of a parent that has more (branch points, a leaf with its
labels: few). One dict of lists and strings would be tracked, and each full collection of the
process would visit its 200,000 keys and values for a 100,000-entry session: a cost that comes
with every few thousand allocations anywhere, an append's included.
"""

from __future__ import annotations

from collections.abc import Iterator


class ChildGroups:
    """Children of each parent (None: the roots), in the order they were added."""

    __slots__ = ("several", "single")

    def __init__(self) -> None:
        self.single: dict[str | None, str] = {}
        """The child of a parent that has one."""
        self.several: dict[str | None, list[str]] = {}
        """The children of a parent that has more than one."""

    def add(self, parent: str | None, child: str) -> list[str] | None:
        """Add ``child`` last under ``parent``; its siblings with it when it has any."""
        siblings = self.several.get(parent)
        if siblings is not None:
            siblings.append(child)
            return siblings
        first = self.single.get(parent)
        if first is None:
            self.single[parent] = child
            return None
        # The list first, then the single one goes: a ``copy`` taken meanwhile in another
        # thread sees the first child in one of the two, never in neither.
        siblings = self.several[parent] = [first, child]
        del self.single[parent]
        return siblings

    def remove(self, parent: str | None, child: str) -> None:
        if self.single.get(parent) == child:
            del self.single[parent]
            return
        siblings = self.several.get(parent)
        if siblings is None or child not in siblings:
            return
        siblings.remove(child)
        if len(siblings) == 1:
            self.single[parent] = self.several.pop(parent)[0]

    def take(self, parent: str | None) -> list[str]:
        """Remove and return every child of ``parent``."""
        first = self.single.pop(parent, None)
        return [first] if first is not None else self.several.pop(parent, [])

    def of(self, parent: str | None) -> list[str]:
        """The children of ``parent`` (a new list)."""
        only = self.single.get(parent)
        if only is not None:
            return [only]
        return list(self.several.get(parent, ()))

    def __contains__(self, parent: str | None) -> bool:
        return parent in self.single or parent in self.several

    def parents(self) -> Iterator[str | None]:
        yield from self.single
        yield from self.several

    def copy(self) -> ChildGroups:
        """A copy whose lists are new, which a reader may take in another thread while the
        event loop adds children: each dict is copied in one C call, and a parent that moved
        from ``single`` to ``several`` in between is kept once, with its list."""
        copied = ChildGroups()
        copied.single = self.single.copy()
        copied.several = {parent: list(ids) for parent, ids in list(self.several.items())}
        for parent in copied.several:
            copied.single.pop(parent, None)
        return copied
