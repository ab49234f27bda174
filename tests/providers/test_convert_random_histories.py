"""Whatever the stored history, the converted request is one the API accepts: seeded random
histories, checked against the fake API's request rules."""

from __future__ import annotations

import random

from fake_anthropic import validate_request
from providers.stored_messages import MODEL, assistant, bash, call, result, text, thinking, user
from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.providers.convert import convert_messages


def _random_history(rng: random.Random) -> list[MessageDict]:
    messages: list[MessageDict] = []
    ids: list[str] = []
    for _ in range(rng.randint(1, 14)):
        kind = rng.choice(
            ["user", "assistant", "calls", "result", "result", "orphan", "bash", "summary", "custom"]
        )
        if kind == "user":
            messages.append(user(rng.choice(["hi", "  ", "do it", ""])))
        elif kind == "assistant":
            stop = rng.choice(["stop", "stop", "error", "aborted"])
            blocks = rng.choice(
                [[], [text("ok")], [thinking("t", "S"), text("a")], [thinking("t")], [text(" ")]]
            )
            messages.append(assistant(*blocks, stop=stop))
        elif kind == "calls":
            new = [f"toolu_{rng.randint(0, 5)}" for _ in range(rng.randint(1, 3))]
            ids.extend(new)
            stop = rng.choice(["toolUse", "toolUse", "aborted", "error"])
            messages.append(assistant(*(call(i) for i in new), stop=stop))
        elif kind == "result" and ids:
            messages.append(result(rng.choice(ids), rng.choice(["out", ""]), error=rng.random() < 0.3))
        elif kind == "orphan":
            messages.append(result(f"toolu_orphan{rng.randint(0, 3)}"))
        elif kind == "bash":
            messages.append(
                bash(output="x", exitCode=rng.choice([0, 1, None]), excludeFromContext=rng.random() < 0.3)
            )
        elif kind == "summary":
            messages.append({"role": "compactionSummary", "summary": "s", "tokensBefore": 1, "timestamp": 1})
        else:
            messages.append(
                {"role": "custom", "customType": "c", "content": "note", "display": True, "timestamp": 1}
            )
    return messages


def test_random_histories_always_give_a_valid_request() -> None:
    rng = random.Random(20261121)
    checked = 0
    for _ in range(600):
        history = _random_history(rng)
        converted = convert_messages(history, model_id=MODEL, cache=True)
        if not converted:
            continue  # nothing the model could see (e.g. only whitespace)
        body = {"model": MODEL, "max_tokens": 100, "messages": converted}
        problem = validate_request(body)
        assert problem is None, (problem, history, converted)
        checked += 1
    assert checked > 400
