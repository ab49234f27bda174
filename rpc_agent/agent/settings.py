"""Run-time settings of an AgentSession (what the settings methods change)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class RetrySettings:
    enabled: bool = True
    max_attempts: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60_000


@dataclass(slots=True)
class CompactionSettings:
    enabled: bool = True
    reserve_tokens: int = 16_384
    keep_recent_tokens: int = 20_000


@dataclass(slots=True)
class AgentSettings:
    steering_mode: str = "one-at-a-time"
    follow_up_mode: str = "one-at-a-time"
    retry: RetrySettings | None = None
    compaction: CompactionSettings | None = None
    max_turns: int = 200
    """Safety stop for a runaway tool loop."""

    def __post_init__(self) -> None:
        if self.retry is None:
            self.retry = RetrySettings()
        if self.compaction is None:
            self.compaction = CompactionSettings()
