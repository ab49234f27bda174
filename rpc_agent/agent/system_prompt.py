"""The system prompt: who the agent is, its tools, where it works, and the project's notes.

Context files (AGENTS.md, then CLAUDE.md) are collected from the working directory up to the
file system root, outermost first, as users of coding agents expect: a repository's notes
apply below it, and a nearer folder's notes come last so they win on conflict.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from rpc_agent.providers.base import ToolSpec

CONTEXT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
MAX_CONTEXT_FILE_CHARS = 64_000


def find_context_files(cwd: Path) -> list[Path]:
    found: list[Path] = []
    for folder in [cwd, *cwd.parents]:
        for name in CONTEXT_FILE_NAMES:
            candidate = folder / name
            if candidate.is_file():
                found.append(candidate)
                break
    found.reverse()
    return found


def build_system_prompt(
    cwd: Path,
    tools: list[ToolSpec],
    *,
    now: datetime | None = None,
    additional_directories: list[str] | None = None,
) -> str:
    tool_lines = "\n".join(f"- {tool.name}: {tool.description.splitlines()[0]}" for tool in tools)
    parts = [
        "You are an expert coding assistant working in the user's project. You read files, run "
        "commands, edit code and write new files with the tools below, and you explain briefly "
        "what you did.",
        "",
        "Available tools:",
        tool_lines or "- (none)",
        "",
        "Guidelines:",
        "- Read a file before editing it; use edit for precise changes and write only for new files or full rewrites.",
        "- Prefer grep/find/ls over bash for exploring the code base.",
        "- Keep answers short; show file paths clearly.",
        "",
        f"Current date: {(now or datetime.now(UTC)).strftime('%Y-%m-%d')}",
        f"Current working directory: {cwd}",
    ]
    roots = [Path(root) for root in additional_directories or []]
    if roots:
        parts.append(
            "Additional workspace directories (part of this task too; use absolute paths there): "
            + ", ".join(str(root) for root in roots)
        )
    extra = [root / name for root in roots for name in CONTEXT_FILE_NAMES[:1] if (root / name).is_file()]
    for path in [*find_context_files(cwd), *extra]:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")[:MAX_CONTEXT_FILE_CHARS]
        except OSError:
            continue
        parts += ["", f'<project_context file="{path}">', text.rstrip(), "</project_context>"]
    return "\n".join(parts)
