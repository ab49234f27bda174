"""A world for sandbox tests: a working tree, a folder outside it, a fake HOME with a key in
``~/.ssh`` and an agent home with a stored API key, all under the test's tmp_path."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from rpc_agent.sandbox import Sandbox, SandboxPolicy, bwrap
from rpc_agent.tools.base import ToolContext, ToolOutput

SSH_SECRET = "ssh-secret-of-the-fake-home"
KEY_SECRET = "sk-ant-the-stored-key"

needs_bwrap = pytest.mark.skipif(
    bwrap.unavailable_reason() is not None,
    reason=f"no sandbox here: {bwrap.unavailable_reason()} (CI installs bubblewrap)",
)


@dataclass
class World:
    root: Path
    cwd: Path
    outside: Path
    home: Path
    agent_home: Path
    temp: Path

    def sandbox(self, mode: str, network: str = "deny") -> Sandbox | None:
        if mode == "off":
            return None
        policy = SandboxPolicy(mode, network, explicit=True)  # type: ignore[arg-type]
        return Sandbox.build(
            policy, cwd=self.cwd, agent_home=self.agent_home, home=self.home, temp_dir=self.temp
        )

    def ctx(self, mode: str, network: str = "deny") -> ToolContext:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home)}
        env["RPC_AGENT_HOME"] = str(self.agent_home)
        return ToolContext(cwd=self.cwd, tool_call_id="call-1", env=env, sandbox=self.sandbox(mode, network))


def make_world(tmp_path: Path) -> World:
    world = World(
        root=tmp_path,
        cwd=tmp_path / "work",
        outside=tmp_path / "outside",
        home=tmp_path / "fakehome",
        agent_home=tmp_path / "agent-home",
        temp=tmp_path / "sandbox-temp",
    )
    for folder in (world.cwd, world.outside, world.home / ".ssh", world.agent_home, world.temp):
        folder.mkdir(parents=True)
    (world.outside / "keep.txt").write_text("keep me\n")
    (world.home / ".ssh" / "id_rsa").write_text(SSH_SECRET + "\n")
    (world.agent_home / "auth.json").write_text(f'{{"anthropic": "{KEY_SECRET}"}}\n')
    return world


def text_of(output: ToolOutput) -> str:
    return "".join(str(block["text"]) for block in output.content if block.get("type") == "text")


@contextmanager
def listener(answer: bytes | None = None) -> Iterator[int]:
    """A TCP listener on 127.0.0.1 (in the test's own network namespace); yields its port.

    Nothing accepts: a connect succeeds through the backlog, which is all most tests need. With
    ``answer``, a thread accepts each connection, sends ``answer`` and closes it, so that a client
    that waits for a reply (curl) gets one at once rather than at its timeout.
    """
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    done = threading.Event()
    answering: threading.Thread | None = None
    try:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        if answer is not None:
            server.settimeout(0.05)
            answering = threading.Thread(target=_answer_each, args=(server, answer, done), daemon=True)
            answering.start()
        yield server.getsockname()[1]
    finally:
        done.set()
        if answering is not None:
            answering.join()
        server.close()


def _answer_each(server: socket.socket, answer: bytes, done: threading.Event) -> None:
    while not done.is_set():
        try:
            connection, _ = server.accept()
        except TimeoutError:
            continue
        with connection:
            connection.sendall(answer)
