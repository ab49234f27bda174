"""Answers in a schema: ``-p --output-schema`` and the ``outputSchema`` param of ``prompt``.

The faux provider scripts the model's calls of the final-answer tool (right, wrong, missing);
the anthropic tests drive the real SDK against the fake Messages API and look at what the
model was sent: the tool with the caller's schema, and the forced tool_choice on a re-ask.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from e2e.conftest import (
    E2E,
    JsonDict,
    anthropic,
    expect_error,
    header_and_entries,
    messages_of,
    start,
    wait_event,
)
from e2e.test_headless import Done, run
from fake_anthropic import FakeAnthropic, Reply, Text, ToolUse
from rpc_agent.agent.structured import MAX_REASKS, TOOL_NAME
from rpc_agent.server import errors as codes

pytestmark = pytest.mark.in_process

SCHEMA: JsonDict = {
    "type": "object",
    "properties": {"count": {"type": "integer"}, "files": {"type": "array", "items": {"type": "string"}}},
    "required": ["count", "files"],
    "additionalProperties": False,
}


def answer(arguments: Any) -> JsonDict:
    return {"toolCalls": [{"name": TOOL_NAME, "arguments": arguments}]}


def schema_file(e2e: E2E, schema: Any, name: str = "schema.json") -> str:
    path = e2e.root / name
    path.write_text(json.dumps(schema))
    return str(path)


def run_json(e2e: E2E, prompt: str, schema: Any, script: list[JsonDict]) -> Done:
    """``rpc-agent -p PROMPT --output-schema FILE --output-format json`` with the faux ``script``."""
    return run(
        e2e,
        "-p",
        prompt,
        "--output-schema",
        schema_file(e2e, schema),
        "--output-format",
        "json",
        script=script,
    )


def test_a_missing_and_a_wrong_answer_are_re_asked_and_the_valid_one_is_the_result(e2e: E2E) -> None:
    script = [
        {"text": "There are two."},  # ends the turn without the tool: reminded
        answer({"count": "two", "files": ["a.py"]}),  # does not validate: told why
        answer({"count": 2, "files": ["a.py", "b.py"]}),
        {"text": "never asked for"},
    ]
    done = run_json(e2e, "count", SCHEMA, script)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["structuredOutput"] == {"count": 2, "files": ["a.py", "b.py"]}
    assert result["stopReason"] == "stop"
    assert result["turns"] == 3
    _header, entries = header_and_entries(e2e.session_files()[0])
    reminders = [e for e in entries if e["type"] == "custom_message"]
    assert [r["customType"] for r in reminders] == [TOOL_NAME]
    results = [m["message"] for m in messages_of(entries, "toolResult")]
    assert [r["isError"] for r in results] == [True, False]
    assert "count: 'two' is not of type 'integer'" in results[0]["content"][0]["text"]
    calls = [
        b
        for m in messages_of(entries, "assistant")
        for b in m["message"]["content"]
        if b["type"] == "toolCall"
    ]
    assert calls[-1]["arguments"] == {"count": 2, "files": ["a.py", "b.py"]}


def test_text_output_is_the_answer_as_json(e2e: E2E) -> None:
    done = run(
        e2e,
        "-p",
        "count",
        "--output-schema",
        schema_file(e2e, SCHEMA),
        script=[answer({"count": 0, "files": []})],
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"count": 0, "files": []}


def test_a_run_that_never_answers_validly_exits_1_with_the_last_validation_error(e2e: E2E) -> None:
    script = [answer({"count": n, "files": "not a list"}) for n in range(MAX_REASKS + 3)]
    done = run_json(e2e, "count", SCHEMA, script)
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["stopReason"] == "invalid_output"
    assert result["structuredOutput"] is None
    assert result["turns"] == MAX_REASKS + 1
    assert "files: 'not a list' is not of type 'array'" in result["errorMessage"]
    text = run(e2e, "-p", "count", "--output-schema", schema_file(e2e, SCHEMA), script=script)
    assert text.returncode == 1
    assert text.stdout == ""
    assert "is not of type 'array'" in text.stderr


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"type": "objekt"}', "not a valid JSON Schema: type"),
        ("{not json", "not JSON"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_an_unusable_schema_is_refused_before_the_run(e2e: E2E, content: str, reason: str) -> None:
    path = e2e.root / "bad.json"
    path.write_text(content)
    done = run(e2e, "-p", "count", "--output-schema", str(path), script=[{"text": "ran anyway"}])
    assert done.returncode == 2
    assert reason in done.stderr
    assert done.stdout == ""
    assert e2e.session_files() == []


def test_a_schema_that_is_not_an_object_is_wrapped_for_the_model_and_unwrapped_for_the_caller(
    e2e: E2E,
) -> None:
    schema = {"type": "array", "items": {"$ref": "#/$defs/name"}, "$defs": {"name": {"type": "string"}}}
    script = [answer({"answer": ["a", 1]}), answer({"answer": ["a", "b"]})]
    done = run_json(e2e, "names", schema, script)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredOutput"] == ["a", "b"]


@pytest.mark.anyio
async def test_prompt_takes_an_output_schema_and_refuses_an_invalid_one(e2e: E2E) -> None:
    script = [answer({"count": 1, "files": ["x"]})]
    async with e2e.server(script=script) as client:
        error = await expect_error(client.prompt("count", output_schema={"type": 5}), codes.INVALID_PARAMS)
        assert "not a valid JSON Schema" in error.message
        assert (await client.get_messages()).messages == []  # nothing ran
        result = await client.prompt("count", output_schema=SCHEMA)
        assert result.stopReason == "stop"
        assert result.structuredOutput == {"count": 1, "files": ["x"]}
        again = await client.prompt("and now?")  # the next prompt is an ordinary one
        assert again.structuredOutput is None
        assert again.stopReason == "stop"


@pytest.mark.anyio
async def test_a_prompt_with_an_output_schema_is_not_queued_behind_a_run(e2e: E2E) -> None:
    gate = e2e.root / "go"
    script: list[JsonDict] = [
        {
            "toolCalls": [
                {"name": "bash", "arguments": {"command": f"while [ ! -e {gate} ]; do sleep 0.02; done"}}
            ]
        },
        {"text": "tool done"},
    ]
    async with e2e.server(script=script) as client, anyio.create_task_group() as group:
        first = start(group, lambda: client.call("prompt", {"message": "first"}))
        await wait_event(client, "tool_execution_start")
        params = {"message": "later", "streamingBehavior": "followUp", "outputSchema": SCHEMA}
        busy = await expect_error(client.call("prompt", params), codes.AGENT_BUSY)
        assert "outputSchema" in busy.message
        assert (await client.get_state()).pendingMessageCount == 0
        gate.touch()
        assert (await first.result())["stopReason"] == "stop"


def test_an_output_schema_without_print_is_refused(e2e: E2E) -> None:
    done = run(e2e, "--output-schema", schema_file(e2e, SCHEMA))
    assert done.returncode == 2
    assert "applies to --print (-p) runs only" in done.stderr


# --- the Anthropic provider: what the model is sent ------------------------------------------


def test_the_request_offers_the_schema_as_a_tool_and_forces_it_on_a_re_ask(
    e2e: E2E, fake: FakeAnthropic
) -> None:
    fake.enqueue(
        Reply([Text("Two files.")]),
        Reply([ToolUse("toolu_1", TOOL_NAME, {"count": 2, "files": ["a", "b"]})], stop_reason="tool_use"),
    )
    path = schema_file(e2e, SCHEMA)
    done = run(e2e, *anthropic("-p", "count", "--output-schema", path, "--output-format", "json"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredOutput"] == {"count": 2, "files": ["a", "b"]}
    first, second = fake.bodies
    (tool,) = [t for t in first["tools"] if t["name"] == TOOL_NAME]
    assert tool["input_schema"] == SCHEMA
    assert "tool_choice" not in first  # the model may work with its other tools first
    assert second["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    reminder = second["messages"][-1]
    assert "Call the structured_output tool" in json.dumps(reminder)


def test_with_thinking_on_the_re_ask_does_not_force_the_tool(e2e: E2E, fake: FakeAnthropic) -> None:
    fake.enqueue(
        Reply([Text("Two files.")]),
        Reply([ToolUse("toolu_1", TOOL_NAME, {"count": 2, "files": []})], stop_reason="tool_use"),
    )
    path = schema_file(e2e, SCHEMA)
    done = run(e2e, *anthropic("--thinking", "medium", "-p", "count", "--output-schema", path))
    assert done.returncode == 0, done.stderr  # the fake refuses a forced tool_choice with thinking
    assert json.loads(done.stdout) == {"count": 2, "files": []}
    assert all("tool_choice" not in body for body in fake.bodies)
    assert fake.bodies[1]["thinking"]["type"] in ("enabled", "adaptive")
