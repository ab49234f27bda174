"""Walking a directory tree the way a developer expects: no .git, no node_modules, no .gitignored.

The .gitignore support covers what real projects use: comments, negation (``!``), folder-only
patterns (trailing ``/``), anchored patterns (a ``/`` at the start or in the middle), ``*``,
``?``, ``[...]`` and ``**``. The .gitignore files of the walked folders apply, and those of
the folders above the root up to the enclosing git repository's top.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ALWAYS_SKIP = frozenset({".git", "node_modules"})


def glob_to_regex(pattern: str) -> str:
    """A gitignore-style glob as a regex body (no anchors): ``*`` stays within one path part."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "*":
            if pattern.startswith("**", i):
                after = i + 2
                starts_part = i == 0 or pattern[i - 1] == "/"
                if starts_part and after == n:
                    out.append(".*")
                    i = after
                    continue
                if starts_part and pattern[after] == "/":
                    out.append("(?:.*/)?")
                    i = after + 1
                    continue
                out.append("[^/]*")
                i = after
                continue
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(char))
                i += 1
                continue
            body = pattern[i + 1 : j]
            negated = body[:1] in ("!", "^")
            if negated:
                body = body[1:]
            members = "".join(c if c == "-" else re.escape(c) for c in body)
            out.append(f"[{'^' if negated else ''}{members}]")
            i = j + 1
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


class GlobMatcher:
    """A glob without ``/`` matches a file name at any depth; with ``/``, the path from the root."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._by_path = "/" in pattern.rstrip("/")
        body = glob_to_regex(pattern.strip("/") if self._by_path else pattern.rstrip("/"))
        self._regex = re.compile(f"^{body}$", re.DOTALL)

    def matches(self, rel_path: str) -> bool:
        subject = rel_path if self._by_path else rel_path.rsplit("/", 1)[-1]
        return self._regex.match(subject) is not None


@dataclass(frozen=True, slots=True)
class _Rule:
    base: str
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def parse_gitignore(text: str, base: str) -> list[_Rule]:
    """Rules of one .gitignore that sits in the folder ``base`` (an absolute posix path)."""
    rules: list[_Rule] = []
    for raw in text.splitlines():
        line = raw
        if not line or line.startswith("#"):
            continue
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        line = stripped
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        body = glob_to_regex(line.lstrip("/"))
        prefix = "^" if anchored else "^(?:.*/)?"
        rules.append(_Rule(base, re.compile(f"{prefix}{body}$", re.DOTALL), negate, dir_only))
    return rules


def _load_rules(folder: str) -> list[_Rule]:
    try:
        with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as handle:
            return parse_gitignore(handle.read(), folder)
    except OSError:
        return []


def is_ignored(rules: tuple[_Rule, ...], abs_path: str, is_dir: bool) -> bool:
    ignored = False
    for rule in rules:
        if rule.dir_only and not is_dir:
            continue
        if not abs_path.startswith(rule.base + "/") and rule.base != "/":
            continue
        rel = abs_path[len(rule.base) :].lstrip("/")
        if rule.regex.match(rel):
            ignored = not rule.negate
    return ignored


def _ancestor_rules(root: str) -> tuple[_Rule, ...]:
    """Rules from the .gitignore files above ``root``, up to the git repository's top."""
    folders: list[str] = []
    current = os.path.dirname(root)
    if os.path.isdir(os.path.join(root, ".git")):
        return ()
    while True:
        folders.append(current)
        if os.path.exists(os.path.join(current, ".git")):
            break
        parent = os.path.dirname(current)
        if parent == current:
            return ()  # not inside a git repository: only the root's own rules apply
        current = parent
    rules: list[_Rule] = []
    for folder in reversed(folders):
        rules.extend(_load_rules(folder))
    return tuple(rules)


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as scan:
            return sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return []


def walk(root: Path, *, check: Callable[[], None] | None = None) -> Iterator[tuple[Path, str, bool]]:
    """Yield ``(path, path relative to root in posix form, is_dir)``, depth first, names sorted.

    Ignored folders are not entered. Symlinks are listed but not followed. ``check`` is called
    for every entry (a cancellation check when this runs in a worker thread).
    """
    top = os.path.normpath(os.path.abspath(root))
    top_rules = _ancestor_rules(top) + tuple(_load_rules(top))
    stack: list[tuple[Iterator[os.DirEntry[str]], str, tuple[_Rule, ...]]] = [
        (iter(_entries(top)), "", top_rules)
    ]
    while stack:
        entries, rel, rules = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        if check is not None:
            check()
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if is_dir and entry.name in ALWAYS_SKIP:
            continue
        abs_path = entry.path if os.sep == "/" else entry.path.replace(os.sep, "/")
        if is_ignored(rules, abs_path, is_dir):
            continue
        entry_rel = f"{rel}/{entry.name}" if rel else entry.name
        yield Path(entry.path), entry_rel, is_dir
        if is_dir:
            stack.append((iter(_entries(entry.path)), entry_rel, rules + tuple(_load_rules(entry.path))))
