"""Settings come from defaults, the global file, the project file, then flags, in that order."""

from __future__ import annotations

from pathlib import Path

import pytest

from rpc_agent.agent.settings import CompactionFile, RetryFile, SettingsFile, load_settings, settings_paths
from rpc_agent.cli import build_parser, flag_overrides, settings_from
from rpc_agent.errors import SettingsError


def test_defaults_without_files(tmp_path: Path) -> None:
    settings = load_settings(settings_paths(tmp_path / "home", tmp_path / "proj"))
    assert settings.compaction is not None
    assert settings.retry is not None
    assert (settings.compaction.reserve_tokens, settings.compaction.keep_recent_tokens) == (16_384, 20_000)
    assert (settings.retry.max_attempts, settings.retry.base_delay_ms) == (3, 2000)


def test_project_file_overrides_global_and_overrides_win(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    (project / ".rpc-agent").mkdir(parents=True)
    home.mkdir()
    (home / "settings.json").write_text(
        '{"compaction": {"reserveTokens": 1000, "keepRecentTokens": 5000}, "retry": {"baseDelayMs": 50}, "x": 1}'
    )
    (project / ".rpc-agent" / "settings.json").write_text('{"compaction": {"keepRecentTokens": 7000}}')
    overrides = SettingsFile(compaction=CompactionFile(enabled=False), retry=RetryFile(maxRetries=9))
    settings = load_settings(settings_paths(home, project), overrides)
    assert settings.compaction is not None
    assert settings.retry is not None
    assert settings.compaction.reserve_tokens == 1000
    assert settings.compaction.keep_recent_tokens == 7000
    assert settings.compaction.enabled is False
    assert settings.retry.base_delay_ms == 50
    assert settings.retry.max_attempts == 9


def test_invalid_settings_file_names_the_file_and_the_field(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text('{"compaction": {"reserveTokens": "lots"}}')
    with pytest.raises(SettingsError, match=r"settings\.json.*compaction\.reserveTokens"):
        load_settings([tmp_path / "settings.json"])


def test_cli_flags_reach_the_settings(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        [
            "--no-auto-retry",
            "--retry-base-delay-ms",
            "10",
            "--keep-recent-tokens",
            "123",
            "--reserve-tokens",
            "7",
        ]
    )
    settings = settings_from(args, tmp_path, tmp_path)
    assert settings.retry is not None
    assert settings.compaction is not None
    assert settings.retry.enabled is False
    assert settings.retry.base_delay_ms == 10
    assert (settings.compaction.keep_recent_tokens, settings.compaction.reserve_tokens) == (123, 7)


SETTINGS_FLAGS = {
    "--no-auto-compaction": [],
    "--no-checkpoints": [],
    "--reserve-tokens": ["7"],
    "--keep-recent-tokens": ["123"],
    "--no-auto-retry": [],
    "--max-retries": ["4"],
    "--retry-base-delay-ms": ["10"],
    "--approval": ["all"],
    "--max-turns": ["3"],
    "--max-budget-usd": ["0.5"],
    "--sandbox": ["read-only"],
    "--sandbox-network": ["allow"],
}
"""Every flag that overrides a settings file's key, with a value."""


def test_every_settings_flag_alone_gives_overrides() -> None:
    parser = build_parser()
    for flag, value in SETTINGS_FLAGS.items():
        overrides = flag_overrides(parser.parse_args([flag, *value]))
        assert overrides is not None, flag
        assert overrides != SettingsFile(), flag


def test_the_settings_flags_are_all_known_to_the_overrides() -> None:
    """A new flag in the settings groups is either in SETTINGS_FLAGS or not a settings key."""
    not_settings = {"--system-prompt", "--append-system-prompt", "--tools"}
    grouped = {
        option
        for group in build_parser()._action_groups
        if group.title in ("compaction and retries", "governing the agent")
        for action in group._group_actions
        for option in action.option_strings
    }
    assert grouped - not_settings == set(SETTINGS_FLAGS)


def test_no_settings_flag_gives_no_overrides_and_the_same_settings(tmp_path: Path) -> None:
    """A plain start builds no settings model; an empty SettingsFile would have changed nothing."""
    args = build_parser().parse_args(["--provider", "faux", "--no-session", "--model", "faux-1"])
    assert flag_overrides(args) is None
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    (home / "settings.json").write_text(
        '{"retry": {"baseDelayMs": 50}, "allow": ["read"], "steeringMode": "all"}'
    )
    paths = settings_paths(home, project)
    assert settings_from(args, home, project) == load_settings(paths, SettingsFile())
    assert load_settings(paths) == load_settings(paths, SettingsFile())
