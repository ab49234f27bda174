from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rpc_agent.tools.base import ToolContext, ToolError
from rpc_agent.tools.ls import LsArgs, LsTool
from tools.helpers import assert_lists, text_of

pytestmark = pytest.mark.anyio


async def test_sorted_with_dirs_marked_and_dotfiles(ctx: ToolContext, tmp_path: Path) -> None:
    for name in ("b.txt", "A.md", ".env", "c"):
        (tmp_path / name).write_text("")
    (tmp_path / "src").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "ignored.log").write_text("")
    (tmp_path / ".gitignore").write_text("*.log\n")
    assert_lists(
        await LsTool().execute(LsArgs(), ctx),
        [".env", ".git/", ".gitignore", "A.md", "b.txt", "c", "ignored.log", "src/"],
    )


async def test_subdirectory_and_limit(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    for i in range(5):
        (tmp_path / "d" / f"f{i}").write_text("")
    out = await LsTool().execute(LsArgs(path="d", limit=2), ctx)
    body, note = text_of(out).split("\n\n")
    assert body.splitlines() == ["f0", "f1"]
    assert "first 2 of 5" in note


async def test_empty_directory(ctx: ToolContext, tmp_path: Path) -> None:
    assert "empty directory" in text_of(await LsTool().execute(LsArgs(), ctx))


async def test_errors(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(ToolError, match="not a directory"):
        await LsTool().execute(LsArgs(path="f"), ctx)
    with pytest.raises(ToolError, match="not found") as info:
        await LsTool().execute(LsArgs(path="nope"), ctx)
    assert str(tmp_path / "nope") in str(info.value)


@pytest.mark.parametrize("args", [{"path": 1}, {"limit": "all"}, {"limit": 0}, {"dir": "."}])
def test_argument_validation(args: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        LsArgs.model_validate(args)
