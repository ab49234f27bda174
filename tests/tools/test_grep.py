from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rpc_agent.tools.base import ToolContext, ToolError, ToolOutput
from rpc_agent.tools.grep import GrepArgs, GrepTool
from tools.helpers import text_of

pytestmark = pytest.mark.anyio

HAVE_RG = shutil.which("rg") is not None


@pytest.fixture(params=["rg", "python"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Every grep test runs with ripgrep (when installed) and with the Python fallback."""
    if request.param == "rg":
        if not HAVE_RG:
            pytest.skip("ripgrep (rg) is not installed")
    else:
        empty = tmp_path.parent / f"{tmp_path.name}-empty-path"
        empty.mkdir()
        monkeypatch.setenv("PATH", str(empty))
        assert shutil.which("rg") is None
    return str(request.param)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("import os\n\ndef main():\n    print('Hello')\n    return 0\n")
    (tmp_path / "src" / "util.py").write_text("def helper():\n    return 'hello world'\n")
    (tmp_path / "README.md").write_text("# Hello project\nrun main\n")
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.py").write_text("print('Hello from build')\n")
    (tmp_path / "debug.log").write_text("Hello log\n")
    (tmp_path / "node_modules" / "pkg").mkdir(parents=True)
    (tmp_path / "node_modules" / "pkg" / "index.js").write_text("Hello\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("Hello\n")
    (tmp_path / "image.bin").write_bytes(b"Hello\x00\x01\x02")
    return tmp_path


async def grep(ctx: ToolContext, **args: Any) -> ToolOutput:
    return await GrepTool().execute(GrepArgs(**args), ctx)


@pytest.mark.usefixtures("backend")
async def test_matches_with_paths_relative_to_cwd(ctx: ToolContext, tree: Path) -> None:
    out = await grep(ctx, pattern="Hello")
    assert text_of(out).splitlines() == ["README.md:1: # Hello project", "src/app.py:4:     print('Hello')"]
    assert out.details["matches"] == 2
    assert out.details["limitReached"] is False


@pytest.mark.usefixtures("backend")
async def test_ignore_case_and_glob(ctx: ToolContext, tree: Path) -> None:
    out = await grep(ctx, pattern="hello", ignoreCase=True, glob="*.py")
    assert text_of(out).splitlines() == [
        "src/app.py:4:     print('Hello')",
        "src/util.py:2:     return 'hello world'",
    ]


@pytest.mark.usefixtures("backend")
async def test_regex_versus_literal(ctx: ToolContext, tree: Path) -> None:
    (tree / "src" / "re.txt").write_text("a.b\naxb\n")
    regex = await grep(ctx, pattern="a.b", path="src/re.txt")
    assert text_of(regex).splitlines() == ["src/re.txt:1: a.b", "src/re.txt:2: axb"]
    literal = await grep(ctx, pattern="a.b", path="src/re.txt", literal=True)
    assert text_of(literal).splitlines() == ["src/re.txt:1: a.b"]


@pytest.mark.usefixtures("backend")
async def test_context_lines_and_separators(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text(
        "".join(f"line {i}\n" for i in range(1, 21)).replace("line 5", "hit 5").replace("line 15", "hit 15")
    )
    out = await grep(ctx, pattern="hit", context=1)
    assert text_of(out).splitlines() == [
        "f.txt-4- line 4",
        "f.txt:5: hit 5",
        "f.txt-6- line 6",
        "--",
        "f.txt-14- line 14",
        "f.txt:15: hit 15",
        "f.txt-16- line 16",
    ]


@pytest.mark.usefixtures("backend")
async def test_respects_gitignore_and_skips_git_node_modules_binaries(ctx: ToolContext, tree: Path) -> None:
    text = text_of(await grep(ctx, pattern="Hello"))
    for hidden in ("build/", "debug.log", "node_modules", ".git/", "image.bin"):
        assert hidden not in text


@pytest.mark.usefixtures("backend")
async def test_limit_with_note_and_trailing_context(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text("".join(f"match {i}\nother {i}\n" for i in range(1, 11)))
    out = await grep(ctx, pattern="match", limit=3, context=1)
    lines = text_of(out).split("\n\n")[0].splitlines()
    assert lines == [
        "many.txt:1: match 1",
        "many.txt-2- other 1",
        "many.txt:3: match 2",
        "many.txt-4- other 2",
        "many.txt:5: match 3",
        "many.txt-6- other 3",
    ]
    assert "Stopped at 3 matches" in text_of(out)
    assert out.details["limitReached"] is True


@pytest.mark.usefixtures("backend")
async def test_exactly_limit_matches_is_not_reported_as_more(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "two.txt").write_text("x\nx\n")
    out = await grep(ctx, pattern="x", limit=2)
    assert out.details["limitReached"] is False
    assert "Stopped" not in text_of(out)


@pytest.mark.usefixtures("backend")
async def test_default_limit_is_100(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("hit\n" * 150)
    out = await grep(ctx, pattern="hit")
    assert out.details["matches"] == 100
    assert text_of(out).count("big.txt:") == 100


@pytest.mark.usefixtures("backend")
async def test_long_lines_are_cut(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("needle" + "x" * 2000 + "\n")
    text = text_of(await grep(ctx, pattern="needle"))
    assert "more chars]" in text
    assert len(text) < 800


@pytest.mark.usefixtures("backend")
async def test_no_matches(ctx: ToolContext, tree: Path) -> None:
    out = await grep(ctx, pattern="zebra")
    assert text_of(out) == "No matches found."
    assert not out.is_error


@pytest.mark.usefixtures("backend")
async def test_invalid_regex_is_a_tool_error(ctx: ToolContext, tree: Path) -> None:
    with pytest.raises(ToolError):
        await grep(ctx, pattern="(unclosed")


@pytest.mark.usefixtures("backend")
async def test_missing_path(ctx: ToolContext, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="not found") as info:
        await grep(ctx, pattern="x", path="nowhere")
    assert str(tmp_path / "nowhere") in str(info.value)


@pytest.mark.usefixtures("backend")
async def test_path_outside_cwd_is_shown_absolute(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "f.txt").write_text("needle\n")
    ctx = ToolContext(cwd=tmp_path / "elsewhere", tool_call_id="c")
    (tmp_path / "elsewhere").mkdir()
    out = await GrepTool().execute(GrepArgs(pattern="needle", path=str(other)), ctx)
    assert text_of(out) == f"{other / 'f.txt'}:1: needle"


async def test_fallback_is_used_without_rg(
    ctx: ToolContext, tree: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = tmp_path.parent / f"{tmp_path.name}-no-rg"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    calls: list[str] = []
    original = GrepTool._python

    def spy(self: GrepTool, *args: Any) -> None:
        calls.append("python")
        original(self, *args)

    async def no_rg(*args: Any) -> None:
        raise AssertionError("ripgrep must not be used")

    monkeypatch.setattr(GrepTool, "_python", spy)
    monkeypatch.setattr(GrepTool, "_ripgrep", no_rg)
    out = await grep(ctx, pattern="Hello")
    assert calls == ["python"]
    assert out.details["matches"] == 2


@pytest.mark.skipif(not HAVE_RG, reason="ripgrep (rg) is not installed")
async def test_rg_is_used_when_on_path(ctx: ToolContext, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_python(*args: Any) -> None:
        raise AssertionError("the fallback must not be used")

    monkeypatch.setattr(GrepTool, "_python", no_python)
    assert (await grep(ctx, pattern="Hello")).details["matches"] == 2


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"pattern": ""},
        {"pattern": "x", "limit": 0},
        {"pattern": "x", "context": -1},
        {"pattern": "x", "ignoreCase": "maybe"},
        {"pattern": ["x"]},
    ],
)
def test_argument_validation(args: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        GrepArgs.model_validate(args)


@pytest.mark.usefixtures("backend")
async def test_matches_around_a_line_longer_than_a_pipe_read(ctx: ToolContext, tmp_path: Path) -> None:
    # ripgrep reports the 300 KB line as one JSON line that arrives in several reads.
    (tmp_path / "wide.txt").write_text("first needle\n" + "x" * 300_000 + " needle\nlast needle\n")
    out = await grep(ctx, pattern="needle")
    lines = text_of(out).splitlines()
    assert lines[0] == "wide.txt:1: first needle"
    assert lines[1].startswith("wide.txt:2: xxx")
    assert lines[2] == "wide.txt:3: last needle"
    assert out.details["matches"] == 3
