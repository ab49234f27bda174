"""Where the sandbox mode comes from: the user's settings, a project's (which may only
tighten them), and the command line (which speaks for the user)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rpc_agent.agent.settings import SandboxFile, SettingsFile, load_settings
from rpc_agent.errors import SettingsError
from rpc_agent.sandbox import SandboxPolicy

JsonDict = dict[str, Any]


def load(
    tmp_path: Path, user: JsonDict | None, project: JsonDict | None, flags: SandboxFile | None = None
) -> SandboxPolicy:
    paths = [tmp_path / "user.json", tmp_path / "project.json"]
    for path, data in zip(paths, (user, project), strict=True):
        if data is not None:
            path.write_text(json.dumps({"sandbox": data}))
    return load_settings(paths, SettingsFile(sandbox=flags) if flags else None).sandbox


def test_off_by_default(tmp_path: Path) -> None:
    policy = load(tmp_path, None, None)
    assert (policy.mode, policy.network, policy.explicit) == ("off", "allow", False)


def test_a_mode_without_a_network_denies_it(tmp_path: Path) -> None:
    policy = load(tmp_path, {"mode": "workspace-write"}, None)
    assert (policy.mode, policy.network, policy.explicit) == ("workspace-write", "deny", True)


@pytest.mark.parametrize(
    ("user", "project", "expected"),
    [
        ({"mode": "workspace-write", "network": "allow"}, {"mode": "off"}, ("workspace-write", "allow")),
        ({"mode": "workspace-write", "network": "allow"}, {"mode": "read-only"}, ("read-only", "allow")),
        ({"mode": "workspace-write", "network": "allow"}, {"network": "deny"}, ("workspace-write", "deny")),
        (
            {"mode": "read-only", "network": "deny"},
            {"mode": "workspace-write", "network": "allow"},
            ("read-only", "deny"),
        ),
        (None, {"mode": "workspace-write"}, ("workspace-write", "allow")),
    ],
)
def test_a_project_tightens_and_never_loosens(
    tmp_path: Path, user: JsonDict | None, project: JsonDict, expected: tuple[str, str]
) -> None:
    policy = load(tmp_path, user, project)
    assert (policy.mode, policy.network) == expected


def test_a_project_cannot_show_the_credentials(tmp_path: Path) -> None:
    policy = load(tmp_path, {"mode": "read-only"}, {"hideCredentials": False})
    assert policy.hide_credentials is True
    assert load(tmp_path, {"mode": "read-only", "hideCredentials": False}, None).hide_credentials is False


def test_the_command_line_speaks_for_the_user(tmp_path: Path) -> None:
    policy = load(tmp_path, {"mode": "read-only"}, None, SandboxFile(mode="off"))
    assert policy.mode == "off"
    policy = load(tmp_path, None, None, SandboxFile(mode="workspace-write", network="allow"))
    assert (policy.mode, policy.network) == ("workspace-write", "allow")


def test_an_unknown_mode_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "user.json").write_text(json.dumps({"sandbox": {"mode": "everything"}}))
    with pytest.raises(SettingsError, match=r"user\.json"):
        load_settings([tmp_path / "user.json"])
