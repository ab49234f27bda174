"""Large input does not hold up other requests: blob work runs off the event loop."""

from __future__ import annotations

import base64
import hashlib
import os
import time

import anyio
import orjson
import pytest

from e2e.conftest import E2E, WAIT

pytestmark = pytest.mark.anyio


@pytest.mark.in_process  # the server's event loop, which is the test's here: blocked, it would answer late
async def test_get_state_is_not_held_up_by_storing_a_big_image(e2e: E2E) -> None:
    raw = os.urandom(45_000_000)  # 60 MB of base64
    blob = e2e.home / "blobs" / hashlib.sha256(raw).hexdigest()
    image = {"type": "image", "data": base64.b64encode(raw).decode(), "mimeType": "image/png"}
    async with e2e.raw() as server:
        # A first exchange puts the session on disk: the next user message is written at once.
        assert (await server.call("prompt", {"message": "hello"}))["result"]["stopReason"] == "stop"
        prompt = {
            "jsonrpc": "2.0",
            "id": "p",
            "method": "prompt",
            "params": {"message": "look", "images": [image]},
        }
        await server.send_raw(
            orjson.dumps(prompt)
            + b"\n"
            + orjson.dumps({"jsonrpc": "2.0", "id": "s", "method": "get_state"})
            + b"\n"
        )
        answer = await server.recv()
        answered_at = time.time()
        assert answer["id"] == "s"
        # (The rest of the run echoes the image in events; this test does not read them.)
        with anyio.fail_after(WAIT):
            while not blob.exists():  # noqa: ASYNC110
                await anyio.sleep(0.05)
    # The image was stored only after get_state had its answer: storing it did not block the loop.
    assert blob.stat().st_size == len(raw)
    assert answered_at < blob.stat().st_mtime
