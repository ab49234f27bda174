from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput
from rpc_agent.tools.find import FindArgs, FindTool
from tools.helpers import assert_lists, text_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in [
        "setup.py",
        "src/pkg/__init__.py",
        "src/pkg/core.py",
        "src/pkg/data.json",
        "tests/test_core.py",
        "build/lib/core.py",
        "dist/pkg.tar.gz",
        "notes.log",
        "keep.log",
        "node_modules/x/index.py",
        ".git/hooks/pre-commit.py",
        "docs/.gitignore",
        "docs/api.py",
        "docs/draft.py",
    ]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    (tmp_path / ".gitignore").write_text("# build output\nbuild/\n/dist\n*.log\n!keep.log\n")
    (tmp_path / "docs" / ".gitignore").write_text("draft.py\n")
    return tmp_path


async def find(ctx: ToolContext, **args: Any) -> ToolOutput:
    return await FindTool().execute(FindArgs(**args), ctx)


async def test_name_glob_matches_at_any_depth_sorted(ctx: ToolContext, tree: Path) -> None:
    assert_lists(
        await find(ctx, pattern="*.py"),
        ["docs/api.py", "setup.py", "src/pkg/__init__.py", "src/pkg/core.py", "tests/test_core.py"],
    )


async def test_gitignore_is_respected(ctx: ToolContext, tree: Path) -> None:
    text = text_of(await find(ctx, pattern="*"))
    assert "keep.log" in text  # re-included by !keep.log
    for ignored in ("build", "dist", "notes.log", "node_modules", ".git/", "draft.py"):
        assert ignored not in text
    assert ".gitignore" in text


async def test_path_glob_and_relative_to_search_dir(ctx: ToolContext, tree: Path) -> None:
    assert text_of(await find(ctx, pattern="src/**/*.py")).splitlines() == [
        "src/pkg/__init__.py",
        "src/pkg/core.py",
    ]
    assert text_of(await find(ctx, pattern="**/core.py")).splitlines() == ["src/pkg/core.py"]
    assert text_of(await find(ctx, pattern="*.py", path="src")).splitlines() == [
        "pkg/__init__.py",
        "pkg/core.py",
    ]


async def test_directories_have_a_trailing_slash(ctx: ToolContext, tree: Path) -> None:
    assert text_of(await find(ctx, pattern="pkg")).splitlines() == ["src/pkg/"]


async def test_limit_note(ctx: ToolContext, tree: Path) -> None:
    out = await find(ctx, pattern="*.py", limit=2)
    body, note = text_of(out).split("\n\n")
    assert body.splitlines() == ["docs/api.py", "setup.py"]
    assert "first 2 of 5" in note
    assert out.details["limitReached"] is True


async def test_default_limit_is_1000(ctx: ToolContext, tmp_path: Path) -> None:
    for i in range(1005):
        (tmp_path / f"f{i:04d}.txt").write_text("")
    out = await find(ctx, pattern="*.txt")
    assert len(text_of(out).split("\n\n")[0].splitlines()) == 1000
    assert "first 1000 of 1005" in text_of(out)


async def test_no_matches(ctx: ToolContext, tree: Path) -> None:
    assert "No files matching" in text_of(await find(ctx, pattern="*.rs"))


async def test_errors(ctx: ToolContext, tree: Path) -> None:
    with pytest.raises(ToolError, match="not found"):
        await find(ctx, pattern="*", path="missing")
    with pytest.raises(ToolError, match="not a directory"):
        await find(ctx, pattern="*", path="setup.py")


@pytest.mark.parametrize("args", [{}, {"pattern": ""}, {"pattern": "*", "limit": 0}, {"pattern": 3}])
def test_argument_validation(args: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        FindArgs.model_validate(args)
