from __future__ import annotations

from pathlib import Path

import pytest

from rpc_agent.tools._walk import GlobMatcher, is_ignored, parse_gitignore, walk


def ignored(gitignore: str, rel: str, *, is_dir: bool = False) -> bool:
    return is_ignored(tuple(parse_gitignore(gitignore, "/repo")), f"/repo/{rel}", is_dir)


@pytest.mark.parametrize(
    ("gitignore", "rel", "is_dir", "expected"),
    [
        ("*.pyc", "a/b/c.pyc", False, True),
        ("*.pyc", "a/b/c.py", False, False),
        ("build/", "build", True, True),
        ("build/", "build", False, False),  # folder-only pattern, and this is a file
        ("build/", "src/build", True, True),
        ("/build", "src/build", True, False),  # anchored to the .gitignore's folder
        ("/build", "build", True, True),
        ("docs/*.md", "docs/a.md", False, True),
        ("docs/*.md", "x/docs/a.md", False, False),
        ("**/logs", "a/b/logs", True, True),
        ("a/**/z", "a/z", False, True),
        ("a/**/z", "a/b/c/z", False, True),
        ("*.log\n!keep.log", "keep.log", False, False),
        ("*.log\n!keep.log", "other.log", False, True),
        ("file[0-9].txt", "file7.txt", False, True),
        ("file[!0-9].txt", "file7.txt", False, False),
        ("# comment\n\n", "# comment", False, False),
        ("\\#hash", "#hash", False, True),
        ("?.txt", "a.txt", False, True),
        ("?.txt", "ab.txt", False, False),
    ],
)
def test_gitignore_rules(gitignore: str, rel: str, is_dir: bool, expected: bool) -> None:
    assert ignored(gitignore, rel, is_dir=is_dir) is expected


@pytest.mark.parametrize(
    ("pattern", "rel", "expected"),
    [
        ("*.py", "a/b.py", True),
        ("*.py", "b.py", True),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", False),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("**/*.py", "a.py", True),
        ("test_*", "tests/test_a.py", True),
    ],
)
def test_glob_matcher(pattern: str, rel: str, expected: bool) -> None:
    assert GlobMatcher(pattern).matches(rel) is expected


def test_gitignore_above_the_root_applies_inside_a_repo(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "a.tmp").write_text("")
    (sub / "a.txt").write_text("")
    assert [rel for _path, rel, _is_dir in walk(sub)] == ["a.txt"]


def test_symlinked_dirs_are_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f").write_text("")
    (tmp_path / "loop").symlink_to(tmp_path)
    assert [(rel, is_dir) for _p, rel, is_dir in walk(tmp_path)] == [
        ("loop", False),
        ("real", True),
        ("real/f", False),
    ]
