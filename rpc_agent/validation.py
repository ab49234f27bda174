"""Pydantic validation errors as one line a person (or a model) can act on."""

from __future__ import annotations

from pydantic import ValidationError


def describe(exc: ValidationError, *, whole: str = "(value)") -> str:
    """``field.path: message; ...``; ``whole`` names the top level when the error is there."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or whole}: {error['msg']}"
        for error in exc.errors(include_url=False)
    )
