"""How a refusal is told: the path or host from the command's own message, and the mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from rpc_agent.agent.sandboxing import SessionSandbox
from rpc_agent.errors import SettingsError
from rpc_agent.sandbox import Sandbox, SandboxPolicy, SandboxUnavailableError, bwrap, denials


def box(tmp_path: Path, mode: str = "workspace-write", network: str = "deny") -> Sandbox:
    (tmp_path / "home" / ".ssh").mkdir(parents=True, exist_ok=True)
    return Sandbox.build(
        SandboxPolicy(mode, network, explicit=True),  # type: ignore[arg-type]
        cwd=tmp_path,
        agent_home=tmp_path / "agent",
        home=tmp_path / "home",
        temp_dir=tmp_path / "temp",
    )


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("touch: cannot touch '/etc/x': Read-only file system", "writing /etc/x was refused"),
        ("bash: line 1: out.txt: Read-only file system", "writing out.txt was refused"),
        ("OSError: [Errno 30] Read-only file system: '/usr/y'", "writing /usr/y was refused"),
        (
            "curl: (7) Failed to connect to 127.0.0.1 port 8080 after 0 ms",
            "connection to 127.0.0.1 was refused",
        ),
        ("curl: (6) Could not resolve host: example.com", "connection to example.com was refused"),
        ("ConnectionRefusedError: [Errno 111] Connection refused", "the network connection was refused"),
    ],
)
def test_the_note_names_what_was_refused(tmp_path: Path, output: str, expected: str) -> None:
    note = denials.explain(output, box(tmp_path))
    assert note is not None
    assert expected in note
    assert "(sandbox workspace-write, network deny)" in note


def test_a_hidden_path_is_named(tmp_path: Path) -> None:
    sandbox = box(tmp_path)
    note = denials.explain(f"cat: {tmp_path}/home/.ssh/id_rsa: No such file or directory", sandbox)
    assert note is not None
    assert f"{tmp_path}/home/.ssh is hidden from sandboxed commands" in note


def test_nothing_to_say_when_nothing_was_refused(tmp_path: Path) -> None:
    assert denials.explain("all good\n", box(tmp_path)) is None
    # With the network allowed, a refused connection is the other side's doing.
    assert denials.explain("Connection refused", box(tmp_path, network="allow")) is None


def test_a_mode_that_cannot_run_is_refused_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = SessionSandbox(SandboxPolicy(), tmp_path)
    monkeypatch.setattr(bwrap, "unavailable_reason", lambda: "no user namespaces here")
    with pytest.raises(
        SandboxUnavailableError, match="'read-only' was asked for, but no user namespaces here"
    ):
        session.set(SandboxPolicy("read-only", "deny", explicit=True))
    assert session.policy.mode == "off"
    assert isinstance(SandboxUnavailableError("x"), SettingsError)  # answered as INVALID_PARAMS


def test_a_permission_error_of_the_files_own_is_not_blamed_on_the_sandbox(tmp_path: Path) -> None:
    assert denials.explain("cat: /root/x: Permission denied", box(tmp_path)) is None
