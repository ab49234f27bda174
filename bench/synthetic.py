"""Synthetic, realistic v3 session files for the benchmarks, written once and reused.

User messages, assistant messages with thinking, text and tool calls (usage with cost), tool
results with multi-line output, a few branches (with and without ``branch_summary``), two
compactions, labels, a model change, a thinking level change, a session name and a few
extension entries; about 750 bytes per entry. The files are deterministic (fixed seed).
"""

from __future__ import annotations

import base64
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

JsonDict = dict[str, Any]

DEFAULT_DATA_DIR = Path(__file__).resolve().parent / ".data"
"""Where the files go (git-ignored)."""
GENERATOR_VERSION = 1
"""Part of the data file names: bump it when the generator changes so old files are not reused."""

BRANCH_EVERY = 500
"""Entries per branch in the branchy shape (see ``ensure_session_file``)."""


_WORD_TEXT = (
    "the a to of and in is it that for on with as this be by not are from or at we can should "
    "will need first then check make sure value error test file path module import config session "
    "entry tree parent leaf branch compaction summary token model context message tool result "
    "output line code change fix update refactor function class return type list dict string "
    "parse load write read append lock fsync durable cache index query handler request response "
    "server client stream event loop task worker thread queue batch retry timeout cancel latency "
    "memory buffer offset length header version migrate schema field option default argument "
    "assert expect failure passing failing coverage lint format build install package depend"
)
_WORDS = _WORD_TEXT.split()
_DIRS = ("core", "session", "rpc", "tools", "agent", "utils", "providers", "compaction", "cli", "tests")
_FILES = ("store", "writer", "context", "entries", "server", "dispatch", "bash", "edit", "read", "models")
_CODE = (
    "def {w}_{v}(self, {w}: str) -> None:",
    "    return self._{w}.get({v!r})",
    "    if not {w}:",
    "        raise ValueError(f'bad {w}: {{{v}}}')",
    "for {w} in self.{v}s:",
    "    {w} = {v}.{w}({v}, timeout=30)",
    "import {w}",
    "from .{w} import {v}",
    "class {W}{V}:",
    "    {w}: list[str] = field(default_factory=list)",
    "# {w} {v} {w}",
    "    await self.{w}.{v}()",
)
_MODELS = (("anthropic", "claude-sonnet-4-5"), ("anthropic", "claude-opus-4-1"))
_TOOLS = ("read", "bash", "edit", "write", "grep")


@dataclass(slots=True)
class _Node:
    id: str
    kind: str
    """"user", "assistant_end" (end of a turn), or another entry/message kind."""


class SessionGenerator:
    """Writes one synthetic session as v3 JSONL; entries always extend the current path.

    Planned events happen at fixed fractions of the requested size, so every size holds the
    same mix: branches back a few turns (a sibling path is left behind), with a
    ``branch_summary`` or without (as a plain ``branch()`` followed by an append writes it),
    compactions keeping the last few turns, labels, a model and a thinking level change.
    The last line is the last entry of the current path: the leaf for both implementations.
    """

    def __init__(self, entries: int, seed: int = 20261121, *, branchy: bool = False) -> None:
        self.target = entries
        self.branchy = branchy
        self.fork_point = -1
        self.rng = random.Random(seed + entries)
        self.ids: set[str] = set()
        self.path: list[_Node] = []
        self.lines: list[bytes] = []
        self.count = 0
        self.clock = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
        self.model = _MODELS[0]
        self.events = self._plan()

    def _plan(self) -> dict[int, str]:
        fractions = {
            0.15: "branch_summary",
            0.30: "branch",
            0.35: "thinking_level_change",
            0.45: "branch_summary",
            0.50: "compaction",
            0.60: "branch",
            0.65: "custom_message",
            0.70: "model_change",
            0.80: "branch_summary",
            0.90: "compaction",
            0.93: "label_clear",
        }
        if self.branchy:
            del fractions[0.50], fractions[0.90]
        plan = {max(4, int(self.target * f)): name for f, name in fractions.items()}
        if self.branchy:
            # Every BRANCH_EVERY entries the path alternately marks a fork point and goes back
            # to it, so each block of that many entries is a branch and about half of the file
            # is on the current path.
            for block, at in enumerate(range(BRANCH_EVERY, self.target, BRANCH_EVERY)):
                plan[at] = "fork_back" if block % 2 else "fork_mark"
        step = max(self.target // 20, 8)
        for at in range(step // 2, self.target, step):
            plan.setdefault(at, "label" if (at // step) % 2 else "custom")
        return plan

    # -- small pieces

    def _id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def _tick(self, low: float = 0.3, high: float = 20.0) -> str:
        self.clock += timedelta(milliseconds=int(self.rng.uniform(low, high) * 1000))
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def _ms(self) -> int:
        return int(self.clock.timestamp() * 1000)

    def _prose(self, low: int, high: int) -> str:
        words = self.rng.choices(_WORDS, k=self.rng.randint(low, high))
        out: list[str] = []
        for start in range(0, len(words), 14):
            sentence = " ".join(words[start : start + 14])
            out.append(sentence[:1].upper() + sentence[1:] + ".")
        return " ".join(out)

    def _path(self) -> str:
        return f"src/{self.rng.choice(_DIRS)}/{self.rng.choice(_FILES)}.py"

    def _code_line(self) -> str:
        w, v = self.rng.choice(_WORDS), self.rng.choice(_WORDS)
        return self.rng.choice(_CODE).format(w=w, v=v, W=w.capitalize(), V=v.capitalize())

    def _output(self, low: int, high: int) -> str:
        lines: list[str] = []
        start = self.rng.randint(1, 400)
        style = self.rng.randrange(3)
        for number in range(start, start + self.rng.randint(low, high)):
            if style == 0:
                lines.append(f"{number:>6}\t{self._code_line()}")
            elif style == 1:
                lines.append(f"{self._path()}:{number}: {self._code_line().strip()}")
            else:
                status = self.rng.choice(("PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"))
                lines.append(
                    f"tests/test_{self.rng.choice(_FILES)}.py::test_{self.rng.choice(_WORDS)} {status}"
                )
        return "\n".join(lines)

    def _signature(self) -> str:
        return base64.b64encode(self.rng.randbytes(self.rng.randint(48, 96))).decode("ascii")

    def _usage(self) -> JsonDict:
        rng = self.rng
        tokens_in, tokens_out = rng.randint(1, 40), rng.randint(40, 1800)
        cache_read, cache_write = rng.randint(5_000, 120_000), rng.randint(0, 4_000)
        cost = {
            "input": round(tokens_in * 3e-6, 8),
            "output": round(tokens_out * 15e-6, 8),
            "cacheRead": round(cache_read * 0.3e-6, 8),
            "cacheWrite": round(cache_write * 3.75e-6, 8),
        }
        cost["total"] = round(sum(cost.values()), 8)
        return {
            "input": tokens_in,
            "output": tokens_out,
            "cacheRead": cache_read,
            "cacheWrite": cache_write,
            "totalTokens": tokens_in + tokens_out + cache_read + cache_write,
            "cost": cost,
        }

    def _tool_call(self) -> JsonDict:
        rng = self.rng
        name = rng.choice(_TOOLS)
        arguments: JsonDict
        if name == "read":
            arguments = {"path": self._path()}
        elif name == "bash":
            arguments = {
                "command": f"cd /work/project && .venv/bin/pytest -q tests/test_{rng.choice(_FILES)}.py"
            }
        elif name == "edit":
            arguments = {
                "path": self._path(),
                "oldText": "\n".join(self._code_line() for _ in range(rng.randint(1, 4))),
                "newText": "\n".join(self._code_line() for _ in range(rng.randint(1, 4))),
            }
        elif name == "write":
            arguments = {
                "path": self._path(),
                "content": "\n".join(self._code_line() for _ in range(rng.randint(2, 6))),
            }
        else:
            arguments = {"pattern": rng.choice(_WORDS), "path": "src"}
        tool_id = "toolu_" + base64.b32encode(rng.randbytes(15)).decode("ascii").lower()
        return {"type": "toolCall", "id": tool_id, "name": name, "arguments": arguments}

    # -- entries

    def _emit(self, fields: JsonDict, kind: str, *, parent: str | None = None, low: float = 0.3) -> str:
        entry_id = self._id()
        entry: JsonDict = {
            "type": fields.pop("type"),
            "id": entry_id,
            "parentId": parent if parent is not None else (self.path[-1].id if self.path else None),
            "timestamp": self._tick(low),
        }
        entry.update(fields)
        self.lines.append(orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE))
        self.path.append(_Node(entry_id, kind))
        self.count += 1
        return entry_id

    def _message(self, message: JsonDict, kind: str) -> str:
        message["timestamp"] = self._ms()
        return self._emit({"type": "message", "message": message}, kind)

    def _user(self) -> None:
        rng = self.rng
        text = self._prose(6, 60)
        if rng.random() < 0.25:
            text += "\n\n```\n" + self._output(2, 8) + "\n```"
        content: Any = text if rng.random() < 0.3 else [{"type": "text", "text": text}]
        self._message({"role": "user", "content": content}, "user")

    def _assistant(self, *, final: bool) -> list[JsonDict]:
        rng = self.rng
        content: list[JsonDict] = [
            {"type": "thinking", "thinking": self._prose(5, 30), "thinkingSignature": self._signature()}
        ]
        if final or rng.random() < 0.5:
            content.append({"type": "text", "text": self._prose(5, 70 if final else 20)})
        calls = [] if final else [self._tool_call() for _ in range(1 if rng.random() < 0.85 else 2)]
        content.extend(calls)
        provider, model = self.model
        message: JsonDict = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": provider,
            "model": model,
            "usage": self._usage(),
            "stopReason": "stop" if final else "toolUse",
        }
        self._message(message, "assistant_end" if final else "assistant")
        return calls

    def _tool_result(self, call: JsonDict) -> None:
        rng = self.rng
        name = call["name"]
        if name == "edit":
            text = f"Successfully replaced text in {call['arguments']['path']}."
        elif name == "write":
            text = f"Wrote {len(call['arguments']['content'])} bytes to {call['arguments']['path']}"
        else:
            text = self._output(2, 19)
        message: JsonDict = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": rng.random() < 0.05,
        }
        if name == "bash":
            message["details"] = {"exitCode": 0 if not message["isError"] else 1, "truncated": False}
        self._message(message, "toolResult")

    def _turn(self) -> None:
        self._user()
        for _ in range(self.rng.randint(0, 6)):
            calls = self._assistant(final=False)
            for call in calls:
                self._tool_result(call)
        self._assistant(final=True)

    # -- planned events

    def _turn_end_back(self, turns_back: int) -> int:
        """Index in the path of the end of the turn ``turns_back`` turns ago (-1: none)."""
        seen = 0
        for index in range(len(self.path) - 2, 0, -1):
            if self.path[index].kind == "assistant_end":
                seen += 1
                if seen >= turns_back:
                    return index
        return -1

    def _user_back(self, turns_back: int) -> str | None:
        seen = 0
        for node in reversed(self.path):
            if node.kind == "user":
                seen += 1
                if seen >= turns_back:
                    return node.id
        return None

    def _event(self, name: str) -> None:
        rng = self.rng
        if name == "fork_mark":
            self.fork_point = len(self.path) - 1  # events come between turns: a turn's end
        elif name == "fork_back":
            if 0 <= self.fork_point < len(self.path):
                del self.path[self.fork_point + 1 :]
            self.fork_point = -1
        elif name in ("branch", "branch_summary"):
            index = self._turn_end_back(rng.randint(2, 5))
            if index < 0:
                return
            point = self.path[index].id
            del self.path[index + 1 :]
            if name == "branch_summary":
                self._emit(
                    {
                        "type": "branch_summary",
                        "fromId": point,
                        "summary": "The user explored an alternative approach: " + self._prose(60, 160),
                        "details": {
                            "readFiles": [self._path() for _ in range(3)],
                            "modifiedFiles": [self._path()],
                        },
                    },
                    "branch_summary",
                    parent=point,
                )
        elif name == "compaction":
            first_kept = self._user_back(rng.randint(3, 6))
            if first_kept is None:
                return
            self._emit(
                {
                    "type": "compaction",
                    "summary": "## Goal\n"
                    + self._prose(30, 60)
                    + "\n\n## Progress\n"
                    + "\n".join("- " + self._prose(8, 20) for _ in range(12))
                    + "\n\n## Next steps\n"
                    + self._prose(20, 50),
                    "firstKeptEntryId": first_kept,
                    "tokensBefore": rng.randint(150_000, 190_000),
                    "details": {
                        "readFiles": sorted({self._path() for _ in range(8)}),
                        "modifiedFiles": sorted({self._path() for _ in range(4)}),
                    },
                },
                "compaction",
            )
        elif name == "model_change":
            self.model = _MODELS[1]
            self._emit({"type": "model_change", "provider": self.model[0], "modelId": self.model[1]}, "model")
        elif name == "thinking_level_change":
            self._emit({"type": "thinking_level_change", "thinkingLevel": "high"}, "thinking")
        elif name in ("label", "label_clear"):
            target = self._user_back(rng.randint(1, 3))
            if target is None:
                return
            fields: JsonDict = {"type": "label", "targetId": target}
            if name == "label":
                fields["label"] = f"checkpoint-{self.count}"
            self._emit(fields, "label")
        elif name == "custom":
            self._emit({"type": "custom", "customType": "bench-ext", "data": {"count": self.count}}, "custom")
        elif name == "custom_message":
            self._emit(
                {
                    "type": "custom_message",
                    "customType": "bench-ext",
                    "content": "Injected by an extension: " + self._prose(10, 30),
                    "display": True,
                    "details": {"source": "bench"},
                },
                "custom_message",
            )

    # -- the file

    def build(self) -> bytes:
        header = {
            "type": "session",
            "version": 3,
            "id": "0195f3a2-7c4e-7000-8000-" + f"{self.rng.getrandbits(48):012x}",
            "timestamp": self._tick(),
            "cwd": "/work/project",
        }
        self.lines.append(orjson.dumps(header, option=orjson.OPT_APPEND_NEWLINE))
        self._emit({"type": "model_change", "provider": self.model[0], "modelId": self.model[1]}, "model")
        self._emit({"type": "thinking_level_change", "thinkingLevel": "medium"}, "thinking")
        self._emit({"type": "session_info", "name": f"Synthetic session ({self.target} entries)"}, "info")
        pending = sorted(self.events)
        while self.count < self.target:
            while pending and pending[0] <= self.count:
                self._event(self.events[pending.pop(0)])
            self._turn()
        return b"".join(self.lines)


def ensure_session_file(folder: Path, entries: int, *, branchy: bool = False) -> Path:
    """The synthetic session of ``entries`` entries (about; a turn is never cut), made once.

    ``branchy``: the long-session shape of issue 13 (a branch every ``BRANCH_EVERY`` entries,
    about half of the entries on the current path, no compaction) instead of the default mix.
    """
    folder.mkdir(parents=True, exist_ok=True)
    shape = "-branchy" if branchy else ""
    path = folder / f"session-{entries}{shape}-g{GENERATOR_VERSION}.jsonl"
    if not path.exists():
        data = SessionGenerator(entries, branchy=branchy).build()
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
    return path
