"""``rpc-agent -p``: one prompt, the answer on stdout, an exit code; and the run limits.

The command runs through the real ``rpc_agent.cli.main`` in the test's process (``in_process``:
the fixture gives it the environment and working directory a process would have), with its
stdout and stderr captured: what it prints and returns is the point, not the interpreter.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass

import pytest

from e2e.conftest import E2E, JsonDict, header_and_entries, messages_of
from rpc_agent import cli

pytestmark = pytest.mark.in_process


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


def run(e2e: E2E, *args: str, script: list[JsonDict] | None = None) -> Done:
    assert e2e.in_process, "the e2e fixture sets the environment only for in_process tests"
    stdout, stderr = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8") for _ in range(2))
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = cli.main(e2e.argv(*args, script=script))
    return Done(code, _written(stdout), _written(stderr))


def _written(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode()


def bash_call(command: str) -> JsonDict:
    return {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}


def test_print_text_prints_the_final_answer(e2e: E2E) -> None:
    done = run(e2e, "-p", "hello", script=[bash_call("echo hi > f.txt"), {"text": "All done."}])
    assert done.returncode == 0, done.stderr
    assert done.stdout == "All done.\n"
    assert (e2e.cwd / "f.txt").read_text() == "hi\n"


def test_print_json_reports_the_run_and_continue_resumes_it(e2e: E2E) -> None:
    done = run(
        e2e, "-p", "first", "--output-format", "json", script=[{"text": "one", "usage": {"costUsd": 0.25}}]
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["text"] == "one"
    assert result["stopReason"] == "stop"
    assert result["turns"] == 1
    assert result["costUsd"] == 0.25
    assert result["usage"]["output"] > 0
    assert result["durationMs"] >= 0
    session = result["sessionFile"]
    again = run(e2e, "-p", "second", "--continue", "--output-format", "json", script=[{"text": "two"}])
    assert json.loads(again.stdout)["sessionFile"] == session
    _header, entries = header_and_entries(e2e.session_files()[0])
    assert [m["message"]["content"] for m in messages_of(entries, "user")] == ["first", "second"]


def test_print_stream_json_prints_every_event_then_the_result(e2e: E2E) -> None:
    done = run(e2e, "-p", "hello", "--output-format", "stream-json", script=[{"text": "streamed"}])
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    types = [line["type"] for line in lines]
    assert types[0] == "agent_start"
    assert "message_update" in types
    assert types[-3:] == ["agent_end", "agent_settled", "result"]
    assert lines[-1]["text"] == "streamed"


def test_print_denies_what_the_policy_would_ask_and_says_why(e2e: E2E) -> None:
    script: list[JsonDict] = [
        {"toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "x"}}]},
        {"text": "I could not write it."},
    ]
    done = run(e2e, "-p", "write", "--approval", "writes", "--output-format", "json", script=script)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert not (e2e.cwd / "a.txt").exists()
    (denial,) = result["denials"]
    assert denial["toolName"] == "write"
    assert "no client to ask" in denial["reason"]
    text = run(e2e, "-p", "write", "--approval", "writes", script=script)
    assert "denied write" in text.stderr


def test_print_a_failed_run_exits_1_with_the_error_on_stderr(e2e: E2E) -> None:
    done = run(e2e, "-p", "hello", "--no-auto-retry", script=[{"error": "the model is down", "status": 500}])
    assert done.returncode == 1
    assert "the model is down" in done.stderr


@pytest.mark.parametrize(
    ("flags", "reason"),
    [(("--max-turns", "2"), "max_turns"), (("--max-budget-usd", "0.5"), "max_budget")],
)
def test_each_limit_stops_a_scripted_run(e2e: E2E, flags: tuple[str, str], reason: str) -> None:
    script = [{**bash_call(f"echo {n} >> turns.txt"), "usage": {"costUsd": 0.3}} for n in range(5)]
    done = run(e2e, "-p", "loop", "--output-format", "json", *flags, script=script)
    assert done.returncode == 3, done.stderr
    result = json.loads(done.stdout)
    assert result["stopReason"] == reason
    assert result["turns"] == 2
    assert (e2e.cwd / "turns.txt").read_text() == "0\n1\n"


def test_tools_flag_chooses_the_builtin_tools(e2e: E2E) -> None:
    script: list[JsonDict] = [bash_call("echo no > f.txt"), {"text": "ok"}]
    done = run(e2e, "-p", "go", "--tools", "read,ls", "--output-format", "json", script=script)
    assert done.returncode == 0, done.stderr
    assert not (e2e.cwd / "f.txt").exists()
    bad = run(e2e, "-p", "go", "--tools", "read,nope")
    assert bad.returncode == 1
    assert "nope" in bad.stderr
