"""The key store behind ``rpc-agent login``: private, atomic, and tolerant of a damaged file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rpc_agent.credentials import CredentialsError, CredentialStore, check_key


def test_the_key_file_is_private_even_under_a_permissive_umask(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path / "home")
    old = os.umask(0)
    try:
        store.store("anthropic", "  sk-one \n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert store.api_key("anthropic") == "sk-one"
    store.store("anthropic", "sk-two")
    assert store.api_key("anthropic") == "sk-two"
    assert [p.name for p in store.path.parent.iterdir()] == ["auth.json"]  # no temporary left


def test_other_providers_entries_survive_and_logout_removes_only_ours(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path)
    store.store("other", "key-other")
    store.store("anthropic", "sk-a")
    assert store.remove("anthropic") is True
    assert store.api_key("anthropic") is None
    assert store.api_key("other") == "key-other"
    assert store.remove("anthropic") is False
    assert store.remove("other") is True
    assert not store.path.exists()


@pytest.mark.parametrize("text", ["", "   \n", "sk one", "sk\x00x", "sk\x7f"])
def test_what_cannot_be_a_key_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="API key"):
        check_key(text)


@pytest.mark.parametrize(
    "content", [b"{not json", b"[1, 2]", b'{"anthropic": {"type": "oauth", "key": "x"}}']
)
def test_a_damaged_or_foreign_file_holds_no_key_and_login_replaces_it(tmp_path: Path, content: bytes) -> None:
    store = CredentialStore(tmp_path)
    store.path.write_bytes(content)
    assert store.api_key("anthropic") is None
    store.store("anthropic", "sk-new")
    assert store.api_key("anthropic") == "sk-new"


def test_an_unwritable_home_is_a_clear_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("a file, not a folder")
    with pytest.raises(CredentialsError, match="cannot write"):
        CredentialStore(home).store("anthropic", "sk-x")
