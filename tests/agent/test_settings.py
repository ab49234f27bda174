"""Settings come from defaults, the global file, the project file, then flags, in that order."""

from __future__ import annotations

from pathlib import Path

import pytest

from rpc_agent.agent.settings import CompactionFile, RetryFile, SettingsFile, load_settings, settings_paths
from rpc_agent.cli import (
    HOST_OVERRIDES,
    TUNING_OVERRIDES,
    SettingsOverride,
    build_parser,
    overrides_from,
    settings_from,
    settings_given,
)
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


@pytest.mark.parametrize("override", [*TUNING_OVERRIDES, *HOST_OVERRIDES], ids=lambda o: o.flag)
def test_each_settings_flag_sets_the_key_it_names(override: SettingsOverride) -> None:
    """Settings files ignore unknown keys, so a misspelt key in the flag table would be a flag
    that silently does nothing; each flag is given and its value looked up under its key."""
    expected: object
    if override.value is None:
        argv, expected = [override.flag], False
    elif override.choices is not None:
        argv, expected = [override.flag, override.choices[-1]], override.choices[-1]
    else:
        argv, expected = [override.flag, "7"], 7
    found: object = overrides_from(build_parser().parse_args(argv))
    for name in override.key.split("."):
        found = getattr(found, name)
    assert found == expected


def test_no_settings_flag_overrides_nothing() -> None:
    overrides = overrides_from(build_parser().parse_args([]))
    assert overrides.model_dump(exclude_none=True) == {"compaction": {}, "checkpoints": {}, "retry": {}}


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


@pytest.mark.parametrize("override", [*TUNING_OVERRIDES, *HOST_OVERRIDES], ids=lambda o: o.flag)
def test_each_settings_flag_counts_as_given(override: SettingsOverride) -> None:
    argv = [override.flag] if override.value is None else [override.flag, (override.choices or ("7",))[-1]]
    assert settings_given(build_parser().parse_args(argv))


def test_without_settings_flags_the_settings_are_those_of_empty_overrides(tmp_path: Path) -> None:
    """A start without settings flags skips the overrides (no model built): the same settings."""
    args = build_parser().parse_args(["--provider", "faux", "--no-session", "--model", "faux-1"])
    assert not settings_given(args)
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    (home / "settings.json").write_text(
        '{"retry": {"baseDelayMs": 50}, "allow": ["read"], "steeringMode": "all"}'
    )
    paths = settings_paths(home, project)
    assert settings_from(args, home, project) == load_settings(paths, overrides_from(args))
    assert load_settings(paths) == load_settings(paths, SettingsFile())
