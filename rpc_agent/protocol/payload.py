"""Events as the fronts send them: JSON without the optional fields that are not set."""

from typing import Any

from pydantic import BaseModel

_OPTIONAL_FIELDS: dict[type[BaseModel], tuple[str, ...]] = {}


def _optional_fields(cls: type[BaseModel]) -> tuple[str, ...]:
    names = _OPTIONAL_FIELDS.get(cls)
    if names is None:
        names = tuple(name for name, info in cls.model_fields.items() if not info.is_required())
        _OPTIONAL_FIELDS[cls] = names
    return names


def _drop_unset_optionals(model: BaseModel, data: dict[str, Any]) -> None:
    for name in _optional_fields(type(model)):
        if data.get(name, 0) is None:
            del data[name]
    for name, value in model.__dict__.items():
        if isinstance(value, BaseModel) and isinstance(data.get(name), dict):
            _drop_unset_optionals(value, data[name])


def event_payload(event: BaseModel) -> dict[str, Any]:
    """An event as JSON: optional fields that are None are left out, required ones never.

    ``exclude_none`` would also drop fields that are required but nullable (the ``result`` of
    an aborted ``compaction_end``, the ``leafId`` of a ``session_changed`` to the root), and
    the event would then fail its own schema. Messages inside events are plain dicts and go
    out exactly as stored.
    """
    data = event.model_dump(mode="json")
    _drop_unset_optionals(event, data)
    return data
